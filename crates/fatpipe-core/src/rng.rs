//! Per-component random streams.
//!
//! Each component (a traffic source, a queue with random drops, ...) owns one [`RngStream`],
//! derived from the scenario seed and a stable component id (a string such as `"flow/3/start"`),
//! in the way ns-3's `AssignStreams` gives each object its own stream. Adding a component therefore
//! never shifts the random numbers another component sees, and nothing is seeded from the clock.
//!
//! Generator: xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number generators",
//! ACM TOMS 2021), seeded through SplitMix64 as its authors recommend. It is written here (a dozen
//! lines) so the stream is fixed by this file and not by a dependency's version.

/// SplitMix64 step (Steele, Lea, Flood, OOPSLA 2014); used only to expand seeds.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a 64-bit hash of a component id: stable across Rust versions and platforms
/// (unlike `std::hash`), which matters because it decides the stream.
fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// A deterministic random stream.
#[derive(Clone, Debug)]
pub struct RngStream {
    s: [u64; 4],
}

impl RngStream {
    /// The stream of component `component_id` under scenario seed `seed`.
    pub fn new(seed: u64, component_id: &str) -> Self {
        let mut st = seed ^ fnv1a(component_id).rotate_left(17);
        let s = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        RngStream { s }
    }

    /// Next 64 random bits (xoshiro256**).
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n) (n > 0), by Lemire's multiply-shift (bias < 2^-64 · n).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_id_give_same_stream_and_ids_are_independent() {
        let mut a = RngStream::new(7, "flow/1");
        let mut b = RngStream::new(7, "flow/1");
        let mut c = RngStream::new(7, "flow/2");
        let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn uniform_mean_is_about_half() {
        let mut r = RngStream::new(1, "x");
        let n = 100_000;
        let m: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        // Standard error of the mean is 1/sqrt(12 n) ≈ 0.0009; 5 sigma ≈ 0.0046.
        assert!((m - 0.5).abs() < 0.0046, "mean {m}");
    }
}
