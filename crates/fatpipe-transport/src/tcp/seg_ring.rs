//! Per-segment values of a sender's outstanding window, indexed by segment number.
//!
//! Segment `seg` lives in slot `seg & mask` of a power-of-two buffer. The window [una, nxt)
//! belongs to the scoreboard, which keeps both ends; the ring only stores values. Advancing
//! `una` (a cumulative ACK) therefore costs nothing here: the freed slots are overwritten when
//! later segments are sent. Memory follows the largest window, as a `VecDeque`'s would.

use std::ops::{Index, IndexMut};

#[derive(Clone, Debug, Default)]
pub struct SegRing<T> {
    buf: Vec<T>,
    mask: u64,
}

impl<T: Copy + Default> SegRing<T> {
    /// Store `v` for segment `nxt`, the window being [una, nxt) before it.
    #[inline]
    pub fn push(&mut self, una: u64, nxt: u64, v: T) {
        if nxt - una >= self.buf.len() as u64 {
            self.grow(una, nxt);
        }
        self[nxt] = v;
    }

    /// Double the buffer, keeping the values of the window [una, nxt).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, una: u64, nxt: u64) {
        let cap = (self.buf.len() * 2).max(16);
        let mask = cap as u64 - 1;
        let mut buf = vec![T::default(); cap];
        for seg in una..nxt {
            buf[(seg & mask) as usize] = self[seg];
        }
        self.buf = buf;
        self.mask = mask;
    }
}

impl<T> Index<u64> for SegRing<T> {
    type Output = T;
    #[inline]
    fn index(&self, seg: u64) -> &T {
        &self.buf[(seg & self.mask) as usize]
    }
}

impl<T> IndexMut<u64> for SegRing<T> {
    #[inline]
    fn index_mut(&mut self, seg: u64) -> &mut T {
        &mut self.buf[(seg & self.mask) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::SegRing;

    #[test]
    fn values_survive_growth_and_wrap_around() {
        let mut r: SegRing<u64> = SegRing::default();
        let (mut una, mut nxt) = (0u64, 0u64);
        for step in 0..1000u64 {
            r.push(una, nxt, nxt * 7);
            nxt += 1;
            if step % 3 == 0 {
                una += 1; // the window grows by two segments every three steps
            }
            for seg in una..nxt {
                assert_eq!(r[seg], seg * 7);
            }
        }
    }
}
