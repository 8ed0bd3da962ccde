"""Analysis side of the reproduction of Michel (2009), "Análise de Protocolos TCP para Redes de
Alta Velocidade" (UNICAMP MSc dissertation; seed note ``shared/seeds/000-michel2009-highspeed-tcp.md``).

One job per module:

- :mod:`~fatpipe.studies.michel2009.reference`: the paper's numbers (``studies/michel2009/reference``)
  and the paper-name <-> fatpipe congestion-control mapping.
- :mod:`~fatpipe.studies.michel2009.measures`: per-run metrics (a :class:`fatpipe.Result` -> float),
  registered in :data:`fatpipe.experiments.METRICS` so sweeps can name them.
- :mod:`~fatpipe.studies.michel2009.ratings`: Tables 4.7/4.8 and the final ranking derived from our
  scores by stated rules, and their cell-by-cell comparison with the paper.
- :mod:`~fatpipe.studies.michel2009.targets`: targets T1–T29 evaluated on a tidy per-point frame.
- :mod:`~fatpipe.studies.michel2009.tables` and :mod:`~fatpipe.studies.michel2009.figures`: the
  paper's tables beside ours (markdown) and Figures 4.3–4.17.

Nothing here imports pandas or matplotlib at module load (they are imported inside functions), so
importing the registry from :mod:`fatpipe.experiments.run_metrics` stays cheap.
"""
