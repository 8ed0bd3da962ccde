//! Frame storage: fixed-size slots in one growing arena, addressed by a `u32` slot number that
//! rides in the model's `Packet` (its `seq` field) while the frame waits in a queue or in the
//! propagation pipe. The kernel writes received frames straight into their slots, so a frame is
//! copied once on the way in and once on the way out.

pub struct Slab {
    buf: Vec<u8>,
    slot: usize,
    lens: Vec<u32>,
    free: Vec<u32>,
}

impl Slab {
    /// `slot` bytes per frame (the largest frame accepted).
    pub fn new(slot: usize, initial_slots: usize) -> Self {
        let mut s = Slab {
            buf: Vec::new(),
            slot,
            lens: Vec::new(),
            free: Vec::new(),
        };
        s.grow(initial_slots.max(1));
        s
    }

    fn grow(&mut self, add: usize) {
        let old = self.lens.len();
        self.buf.resize((old + add) * self.slot, 0);
        self.lens.resize(old + add, 0);
        self.free.extend((old..old + add).rev().map(|i| i as u32));
    }

    pub fn slot_size(&self) -> usize {
        self.slot
    }

    /// Slots in use.
    pub fn in_use(&self) -> usize {
        self.lens.len() - self.free.len()
    }

    /// Make sure `n` slots can be taken without the arena moving (call before handing slot
    /// pointers to the kernel).
    pub fn reserve(&mut self, n: usize) {
        if self.free.len() < n {
            let add = (n - self.free.len()).max(self.lens.len());
            self.grow(add);
        }
    }

    /// Take a free slot (the arena may grow and move: take pointers only after).
    pub fn alloc(&mut self) -> u32 {
        if self.free.is_empty() {
            self.grow(self.lens.len());
        }
        self.free.pop().expect("grown")
    }

    pub fn release(&mut self, i: u32) {
        debug_assert!(!self.free.contains(&i), "slot {i} released twice");
        self.free.push(i);
    }

    /// The whole slot, to receive into.
    pub fn slot_mut(&mut self, i: u32) -> &mut [u8] {
        let o = i as usize * self.slot;
        &mut self.buf[o..o + self.slot]
    }

    pub fn set_len(&mut self, i: u32, len: usize) {
        self.lens[i as usize] = len.min(self.slot) as u32;
    }

    pub fn frame(&self, i: u32) -> &[u8] {
        let o = i as usize * self.slot;
        &self.buf[o..o + self.lens[i as usize] as usize]
    }

    pub fn frame_mut(&mut self, i: u32) -> &mut [u8] {
        let o = i as usize * self.slot;
        let l = self.lens[i as usize] as usize;
        &mut self.buf[o..o + l]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_frames_survive_growth() {
        let mut s = Slab::new(64, 2);
        let a = s.alloc();
        s.slot_mut(a)[..3].copy_from_slice(b"abc");
        s.set_len(a, 3);
        let ids: Vec<u32> = (0..10).map(|_| s.alloc()).collect();
        assert_eq!(s.in_use(), 11);
        assert_eq!(s.frame(a), b"abc");
        s.release(ids[3]);
        assert_eq!(s.alloc(), ids[3]);
        s.reserve(100);
        assert_eq!(s.frame(a), b"abc");
        assert!(s.slot_size() == 64);
    }
}
