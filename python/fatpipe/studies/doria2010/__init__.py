"""The Doria, Salgueiro & Spohn (~2010) reproduction: DCCP CCID 2/3, Compound TCP and CUBIC
carrying VoIP two at a time on a 4-router ring (seed note shared/seeds/001-doria2010-dccp-voip.md,
study files studies/doria2010)."""
