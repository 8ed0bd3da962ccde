//! Unit-carrying newtypes and the parser for unit strings used in scenario files.
//!
//! Accepted forms (whitespace between number and unit allowed, number may be a decimal):
//! - durations: `ns`, `us`, `ms`, `s`, `min`            e.g. `"100ms"`, `"1.5s"`
//! - rates:     `bps`, `kbps`, `Mbps`, `Gbps`, `Tbps`   e.g. `"1Gbps"` (SI: k = 1000)
//! - sizes:     `B`, `KB`, `MB`, `GB` (SI) and `KiB`, `MiB`, `GiB` (binary); `pkt` is handled by the
//!   scenario layer, which knows the packet size.

use crate::time::SimTime;
use std::fmt;

/// A data rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn from_bps(bps: u64) -> Self {
        Rate(bps)
    }
    pub const fn from_mbps(mbps: u64) -> Self {
        Rate(mbps * 1_000_000)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialise `bytes` at this rate, rounded up to a whole nanosecond so that a link
    /// never transmits faster than its rate.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> SimTime {
        // u64 arithmetic when it cannot overflow (any packet below 2.3 GB): a u128 division is a
        // library call on x86-64 and this runs once per packet per hop.
        if bytes < (u64::MAX / 8_000_000_000) {
            return SimTime((bytes * 8_000_000_000).div_ceil(self.0));
        }
        let num = bytes as u128 * 8 * 1_000_000_000;
        SimTime(num.div_ceil(self.0 as u128) as u64)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        if b >= 1e9 {
            write!(f, "{}Gbps", b / 1e9)
        } else if b >= 1e6 {
            write!(f, "{}Mbps", b / 1e6)
        } else if b >= 1e3 {
            write!(f, "{}kbps", b / 1e3)
        } else {
            write!(f, "{}bps", self.0)
        }
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const fn from_packets(n: u64, packet_size: u64) -> Self {
        Bytes(n * packet_size)
    }
}

/// The largest value a unit string may give, in its base unit (ns, bps, B): 2^53, the range in
/// which an f64 (what the number is read as, and what JSON carries) holds every integer exactly.
/// It leaves the core's u64 arithmetic ample headroom (a rate times 10, a time plus a time, a
/// backed-off RTO), so a value is either used exactly or rejected here, never clamped or wrapped
/// downstream: 2^53 ns is 104 days, 2^53 bps 9 Pb/s, 2^53 B 9 PB.
pub const MAX_BASE_UNITS: u64 = 1 << 53;
/// The largest packet count ("2500pkt"): 2^32 - 1, so a count times any packet size stays far
/// below [`MAX_BASE_UNITS`] bytes.
pub const MAX_PACKETS: u64 = u32::MAX as u64;

/// A unit string that could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    pub input: String,
    pub expected: &'static str,
    pub problem: UnitProblem,
}

/// Why a unit string was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitProblem {
    /// Not a number followed by a known unit.
    Unreadable,
    /// A number without a unit (is "1500" bytes or packets?).
    NoUnit,
    /// A minus sign, also on zero ("-0s"): quantities are never negative.
    Negative,
    /// Above the largest value the core represents exactly (the bound, in words).
    TooLarge(&'static str),
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (input, expected) = (&self.input, self.expected);
        match &self.problem {
            UnitProblem::Unreadable => write!(f, "cannot read {input:?} as {expected}"),
            UnitProblem::NoUnit => write!(f, "{input:?} has no unit; write it as {expected}"),
            UnitProblem::Negative => write!(f, "{input:?} is negative; write {expected}"),
            UnitProblem::TooLarge(max) => write!(f, "{input:?} is too large: at most {max}"),
        }
    }
}
impl std::error::Error for UnitError {}

/// Split `"1.5 Gbps"` into (1.5, "Gbps").
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
        })
        .unwrap_or(s.len());
    // Do not swallow the "e" of a unit: only treat e/E as exponent when followed by a digit/sign.
    let mut end = end;
    while end > 0 && matches!(s.as_bytes()[end - 1], b'e' | b'E' | b'+' | b'-') {
        end -= 1;
    }
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((v, unit.trim()))
}

/// Read `s` as a number and a unit from `units` (name, scale to the base unit), and check it:
/// no sign, a unit, at most `max` base units after scaling (`max_text` says it in words).
fn parse_scaled(
    s: &str,
    expected: &'static str,
    units: &[(&str, f64)],
    max: u64,
    max_text: &'static str,
) -> Result<u64, UnitError> {
    let err = |problem| UnitError {
        input: s.to_string(),
        expected,
        problem,
    };
    let (v, unit) = split_number(s).ok_or_else(|| err(UnitProblem::Unreadable))?;
    // `is_sign_negative` also catches "-0": a minus sign is refused wherever it is written.
    if v.is_sign_negative() {
        return Err(err(UnitProblem::Negative));
    }
    if unit.is_empty() {
        return Err(err(UnitProblem::NoUnit));
    }
    let scale = units
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|&(_, scale)| scale)
        .ok_or_else(|| err(UnitProblem::Unreadable))?;
    let x = (v * scale).round();
    // `v` and the scales are finite, so `x` is a number and this comparison is total.
    if x > max as f64 {
        return Err(err(UnitProblem::TooLarge(max_text)));
    }
    Ok(x as u64)
}

const DURATION_UNITS: &[(&str, f64)] = &[
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("min", 60e9),
];
const DURATION_MAX: &str = "2^53 ns (about 104 days)";

/// Parse a duration such as `"100ms"`. Negative values and values above 2^53 ns are rejected.
pub fn parse_duration(s: &str) -> Result<SimTime, UnitError> {
    const EXPECTED: &str = "a duration like \"100ms\" (units: ns, us, ms, s, min)";
    parse_scaled(s, EXPECTED, DURATION_UNITS, MAX_BASE_UNITS, DURATION_MAX).map(SimTime)
}

const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0),
    ("b/s", 1.0),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("kb/s", 1e3),
    ("Mbps", 1e6),
    ("Mb/s", 1e6),
    ("Gbps", 1e9),
    ("Gb/s", 1e9),
    ("Tbps", 1e12),
    ("Tb/s", 1e12),
];
const RATE_MAX: &str = "2^53 bps (about 9 Pbps)";

/// Parse a rate such as `"1Gbps"`. Negative values and values above 2^53 bps are rejected; zero
/// is allowed here and rejected by the caller where it makes no sense (a link).
pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    const EXPECTED: &str = "a rate like \"100Mbps\" (units: bps, kbps, Mbps, Gbps, Tbps)";
    parse_scaled(s, EXPECTED, RATE_UNITS, MAX_BASE_UNITS, RATE_MAX).map(Rate)
}

/// A size that may be given in bytes or in packets (`"2500pkt"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeSpec {
    Bytes(u64),
    Packets(u64),
}

const BYTE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1024.0 * 1024.0),
    ("GiB", 1024.0 * 1024.0 * 1024.0),
];
const PACKET_UNITS: &[(&str, f64)] = &[("pkt", 1.0), ("pkts", 1.0), ("p", 1.0)];

/// Parse a size such as `"10MB"`, `"64KiB"` or `"2500pkt"`. A bare number ("1500") is an error:
/// bytes or packets must be said.
pub fn parse_size(s: &str) -> Result<SizeSpec, UnitError> {
    const EXPECTED: &str =
        "a size like \"10MB\", \"64KiB\", \"1500B\" or \"2500pkt\" (units: B, KB, MB, GB, KiB, MiB, GiB, pkt)";
    let packets =
        split_number(s).is_some_and(|(_, unit)| PACKET_UNITS.iter().any(|(name, _)| *name == unit));
    if packets {
        let n = parse_scaled(s, EXPECTED, PACKET_UNITS, MAX_PACKETS, "4294967295pkt")?;
        // A fraction of a packet is not a count (checked on the number as written).
        if split_number(s).is_some_and(|(v, _)| v.fract() != 0.0) {
            return Err(UnitError {
                input: s.to_string(),
                expected: EXPECTED,
                problem: UnitProblem::Unreadable,
            });
        }
        return Ok(SizeSpec::Packets(n));
    }
    parse_scaled(
        s,
        EXPECTED,
        BYTE_UNITS,
        MAX_BASE_UNITS,
        "2^53 B (about 9 PB)",
    )
    .map(SizeSpec::Bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("100ms").unwrap(), SimTime::from_millis(100));
        assert_eq!(parse_duration("1.5 s").unwrap(), SimTime::from_millis(1500));
        assert_eq!(parse_duration("2us").unwrap(), SimTime(2000));
        assert_eq!(parse_rate("1Gbps").unwrap(), Rate(1_000_000_000));
        assert_eq!(parse_rate("1.5Mbps").unwrap(), Rate(1_500_000));
        assert_eq!(parse_rate("80kbps").unwrap(), Rate(80_000));
        assert_eq!(parse_size("2500pkt").unwrap(), SizeSpec::Packets(2500));
        assert_eq!(parse_size("10MB").unwrap(), SizeSpec::Bytes(10_000_000));
        assert_eq!(parse_size("64KiB").unwrap(), SizeSpec::Bytes(65536));
        assert_eq!(parse_size("1e6B").unwrap(), SizeSpec::Bytes(1_000_000));
    }

    #[test]
    fn rejects_bad_units_and_negatives() {
        assert!(parse_rate("-5Mbps").is_err());
        assert!(parse_rate("5 furlongs").is_err());
        assert!(parse_duration("10").is_err());
        assert!(parse_size("2.5pkt").is_err());
    }

    #[test]
    fn rejects_what_would_be_clamped_signed_or_unitless() {
        // Values the core cannot hold exactly are errors, not saturated or wrapped.
        for s in [
            "1e19bps",
            "18446744073709551616bps",
            "1e30s",
            "1e17B",
            "4294967296pkt",
        ] {
            let e = [
                parse_rate(s).err(),
                parse_duration(s).err(),
                parse_size(s).err(),
            ];
            assert!(
                e.iter()
                    .flatten()
                    .any(|e| e.problem != UnitProblem::Unreadable),
                "{s}"
            );
        }
        assert_eq!(
            parse_rate("1e19bps").unwrap_err().problem,
            UnitProblem::TooLarge(RATE_MAX)
        );
        assert_eq!(
            parse_rate("9Pbps").unwrap_err().problem,
            UnitProblem::Unreadable
        );
        assert_eq!(parse_rate("9000Tbps").unwrap(), Rate(9_000_000_000_000_000));
        assert_eq!(
            parse_duration("104d").unwrap_err().problem,
            UnitProblem::Unreadable
        );
        assert_eq!(
            parse_duration("100day").unwrap_err().problem,
            UnitProblem::Unreadable
        );
        assert!(parse_duration("9007199254740992ns").is_ok());
        assert!(
            parse_duration("9007199254740993ns").is_ok(),
            "rounds to 2^53 in f64"
        );
        assert!(parse_duration("9007199254740994ns").is_err());
        // A minus sign is refused even on zero.
        assert_eq!(
            parse_duration("-0.0s").unwrap_err().problem,
            UnitProblem::Negative
        );
        assert_eq!(
            parse_size("-0B").unwrap_err().problem,
            UnitProblem::Negative
        );
        // A bare number says neither bytes nor packets.
        assert_eq!(parse_size("1500").unwrap_err().problem, UnitProblem::NoUnit);
        assert_eq!(parse_rate("100").unwrap_err().problem, UnitProblem::NoUnit);
        assert_eq!(
            parse_size("4294967295pkt").unwrap(),
            SizeSpec::Packets(u32::MAX as u64)
        );
        assert!(parse_size("nanB").is_err() && parse_rate("infbps").is_err());
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1500 B at 1 Gb/s = 12 000 ns exactly; at 3 bps 1 byte = 2.666.. s -> rounds up.
        assert_eq!(Rate(1_000_000_000).tx_time(1500), SimTime(12_000));
        assert_eq!(Rate(3).tx_time(1), SimTime(2_666_666_667));
    }
}
