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

/// A unit string that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    pub input: String,
    pub expected: &'static str,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read {:?} as {}", self.input, self.expected)
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

/// Parse a duration such as `"100ms"`. Negative values are rejected.
pub fn parse_duration(s: &str) -> Result<SimTime, UnitError> {
    const EXPECTED: &str = "a duration like \"100ms\" (units: ns, us, ms, s, min)";
    let err = || UnitError {
        input: s.to_string(),
        expected: EXPECTED,
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        _ => return Err(err()),
    };
    if v < 0.0 {
        return Err(err());
    }
    Ok(SimTime((v * scale).round() as u64))
}

/// Parse a rate such as `"1Gbps"`. Negative values are rejected; zero is allowed here and
/// rejected by the caller where it makes no sense (a link).
pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    const EXPECTED: &str = "a rate like \"100Mbps\" (units: bps, kbps, Mbps, Gbps, Tbps)";
    let err = || UnitError {
        input: s.to_string(),
        expected: EXPECTED,
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let scale = match unit {
        "bps" | "b/s" => 1.0,
        "kbps" | "Kbps" | "kb/s" => 1e3,
        "Mbps" | "Mb/s" => 1e6,
        "Gbps" | "Gb/s" => 1e9,
        "Tbps" | "Tb/s" => 1e12,
        _ => return Err(err()),
    };
    if v < 0.0 {
        return Err(err());
    }
    Ok(Rate((v * scale).round() as u64))
}

/// A size that may be given in bytes or in packets (`"2500pkt"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeSpec {
    Bytes(u64),
    Packets(u64),
}

/// Parse a size such as `"10MB"`, `"64KiB"` or `"2500pkt"`.
pub fn parse_size(s: &str) -> Result<SizeSpec, UnitError> {
    const EXPECTED: &str =
        "a size like \"10MB\", \"64KiB\", \"1500B\" or \"2500pkt\" (units: B, KB, MB, GB, KiB, MiB, GiB, pkt)";
    let err = || UnitError {
        input: s.to_string(),
        expected: EXPECTED,
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    if v < 0.0 {
        return Err(err());
    }
    let scale = match unit {
        "pkt" | "pkts" | "p" => {
            if v.fract() != 0.0 {
                return Err(err());
            }
            return Ok(SizeSpec::Packets(v as u64));
        }
        "B" | "" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(err()),
    };
    Ok(SizeSpec::Bytes((v * scale).round() as u64))
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
    fn tx_time_rounds_up() {
        // 1500 B at 1 Gb/s = 12 000 ns exactly; at 3 bps 1 byte = 2.666.. s -> rounds up.
        assert_eq!(Rate(1_000_000_000).tx_time(1500), SimTime(12_000));
        assert_eq!(Rate(3).tx_time(1), SimTime(2_666_666_667));
    }
}
