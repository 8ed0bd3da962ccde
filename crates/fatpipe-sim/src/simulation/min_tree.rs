//! The least of a fixed set of times, kept up to date as single values change: a tournament
//! (segment) tree, O(log n) per change and O(1) to read. A data-side merge reads the earliest
//! time any other of its sender hosts can send on its own (`data_merge.rs`) on every data packet,
//! while each host's own time changes only when a timer event is scheduled or fires.

use fatpipe_core::SimTime;

#[derive(Clone, Debug)]
pub(super) struct MinTree {
    /// Leaves at `[width, 2·width)`, each inner node `i` the least of `2i` and `2i + 1`; the
    /// root is node 1 (node 0 is unused).
    nodes: Vec<SimTime>,
    width: usize,
}

impl MinTree {
    /// `n` leaves, all `SimTime::MAX`.
    pub fn new(n: usize) -> Self {
        let width = n.max(1).next_power_of_two();
        MinTree {
            nodes: vec![SimTime::MAX; 2 * width],
            width,
        }
    }

    /// The least leaf.
    #[inline(always)]
    pub fn min(&self) -> SimTime {
        self.nodes[1]
    }

    /// The index of a least leaf (the lowest such index).
    #[inline]
    pub fn argmin(&self) -> usize {
        let mut at = 1;
        while at < self.width {
            at = if self.nodes[2 * at] == self.nodes[at] {
                2 * at
            } else {
                2 * at + 1
            };
        }
        at - self.width
    }

    /// The least leaf other than leaf `i` (MAX if there is none).
    #[inline]
    pub fn min_except(&self, i: usize) -> SimTime {
        let mut at = self.width + i;
        if self.nodes[at] > self.nodes[1] {
            return self.nodes[1];
        }
        let mut least = SimTime::MAX;
        while at > 1 {
            least = least.min(self.nodes[at ^ 1]);
            at /= 2;
        }
        least
    }

    /// Set leaf `i` to `t`.
    #[inline]
    pub fn set(&mut self, i: usize, t: SimTime) {
        let mut at = self.width + i;
        self.nodes[at] = t;
        while at > 1 {
            at /= 2;
            let least = self.nodes[2 * at].min(self.nodes[2 * at + 1]);
            if self.nodes[at] == least {
                break; // the nodes above already hold what they would be given
            }
            self.nodes[at] = least;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random changes against a plain minimum over a vector.
    #[test]
    fn the_root_is_the_least_leaf() {
        for n in [1usize, 2, 3, 5, 8, 13, 20] {
            let mut tree = MinTree::new(n);
            let mut plain = vec![SimTime::MAX; n];
            let mut x: u64 = 0x2545_F491_4F6C_DD1D ^ n as u64;
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x % n as u64) as usize;
                let t = if x & 0x300 == 0 {
                    SimTime::MAX
                } else {
                    SimTime((x >> 20) % 1000)
                };
                tree.set(i, t);
                plain[i] = t;
                assert_eq!(tree.min(), *plain.iter().min().unwrap(), "n {n}");
                let j = ((x >> 40) % n as u64) as usize;
                let others = plain
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != j)
                    .map(|(_, &t)| t)
                    .min()
                    .unwrap_or(SimTime::MAX);
                assert_eq!(tree.min_except(j), others, "n {n}, leaf {j}");
                let a = tree.argmin();
                assert_eq!(plain[a], tree.min(), "n {n}");
                assert!(
                    plain[..a].iter().all(|&t| t > plain[a]),
                    "n {n}: the lowest index"
                );
            }
        }
    }
}
