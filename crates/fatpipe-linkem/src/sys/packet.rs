//! AF_PACKET sockets bound to one interface: frames in with recvmmsg (kernel receive timestamp
//! and checksum status per frame, written straight into the emulator's slots), frames out with
//! sendmmsg. The socket ignores frames it sent itself (PACKET_IGNORE_OUTGOING), bypasses the
//! qdisc layer on send (PACKET_QDISC_BYPASS; there is nothing to queue in on a veth) and puts
//! the interface in promiscuous mode for its lifetime (a packet membership, undone by the kernel
//! when the socket closes, also after a crash).

use super::{cvt, Fd};
use std::io;
use std::mem::{size_of, zeroed};

const ETH_P_ALL: u16 = 0x0003;
/// tpacket_auxdata.tp_status: the L4 checksum is still to be computed (CHECKSUM_PARTIAL).
const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;

pub struct PacketSocket {
    pub fd: Fd,
    pub ifindex: i32,
    pub mtu: u32,
}

fn setopt<T>(fd: i32, level: i32, name: i32, v: &T) -> io::Result<()> {
    // SAFETY: pointer and length of a live value.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            v as *const T as *const libc::c_void,
            size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

fn ifreq(name: &str) -> io::Result<libc::ifreq> {
    // SAFETY: ifreq is plain data.
    let mut r: libc::ifreq = unsafe { zeroed() };
    if name.is_empty() || name.len() >= r.ifr_name.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "bad interface name",
        ));
    }
    for (d, s) in r.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(r)
}

impl PacketSocket {
    /// Open a socket on `ifname` in the current network namespace (call inside
    /// `netns::with_netns`). Brings the interface up if it is down.
    pub fn open(ifname: &str, rcvbuf: usize, sndbuf: usize) -> io::Result<PacketSocket> {
        // Protocol 0 until bound, so nothing from other interfaces is queued meanwhile.
        // SAFETY: plain socket call.
        let fd = Fd(cvt(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        })?);
        let mut r = ifreq(ifname)?;
        // SAFETY: ioctls on a valid ifreq.
        cvt(unsafe { libc::ioctl(fd.0, libc::SIOCGIFINDEX, &mut r) })?;
        let ifindex = unsafe { r.ifr_ifru.ifru_ifindex };
        let mut r = ifreq(ifname)?;
        cvt(unsafe { libc::ioctl(fd.0, libc::SIOCGIFMTU, &mut r) })?;
        let mtu = unsafe { r.ifr_ifru.ifru_mtu } as u32;
        let mut r = ifreq(ifname)?;
        cvt(unsafe { libc::ioctl(fd.0, libc::SIOCGIFFLAGS, &mut r) })?;
        let flags = unsafe { r.ifr_ifru.ifru_flags };
        if flags & libc::IFF_UP as libc::c_short == 0 {
            r.ifr_ifru.ifru_flags = flags | libc::IFF_UP as libc::c_short;
            cvt(unsafe { libc::ioctl(fd.0, libc::SIOCSIFFLAGS, &mut r) })?;
        }
        let one: libc::c_int = 1;
        setopt(fd.0, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &one)?;
        setopt(fd.0, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &one)?;
        setopt(fd.0, libc::SOL_PACKET, libc::PACKET_AUXDATA, &one)?;
        setopt(fd.0, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &one)?;
        let rb = rcvbuf.min(i32::MAX as usize) as libc::c_int;
        let sb = sndbuf.min(i32::MAX as usize) as libc::c_int;
        setopt(fd.0, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &rb)?;
        setopt(fd.0, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &sb)?;
        let mreq = libc::packet_mreq {
            mr_ifindex: ifindex,
            mr_type: libc::PACKET_MR_PROMISC as u16,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        setopt(fd.0, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)?;
        // SAFETY: sockaddr_ll is plain data.
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = ifindex;
        cvt(unsafe {
            libc::bind(
                fd.0,
                &sll as *const _ as *const libc::sockaddr,
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        Ok(PacketSocket { fd, ifindex, mtu })
    }

    /// Frames the kernel dropped for want of buffer since the last call (PACKET_STATISTICS
    /// resets on read).
    pub fn take_drops(&self) -> u64 {
        // SAFETY: plain data out-parameter of the right size.
        let mut st: libc::tpacket_stats = unsafe { zeroed() };
        let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
        let r = unsafe {
            libc::getsockopt(
                self.fd.0,
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                &mut st as *mut _ as *mut libc::c_void,
                &mut len,
            )
        };
        if r == 0 {
            st.tp_drops as u64
        } else {
            0
        }
    }
}

/// What recvmmsg said about one frame.
#[derive(Clone, Copy, Debug, Default)]
pub struct RxMeta {
    pub len: usize,
    /// Longer than the slot: cut (not forwarded).
    pub truncated: bool,
    /// Kernel receive time, CLOCK_REALTIME ns (0 if none came).
    pub ts_real_ns: u64,
    /// The TCP/UDP checksum was left to offload (CHECKSUM_PARTIAL): complete it before sending.
    pub csum_not_ready: bool,
}

const CTRL: usize = 128;

/// Reusable recvmmsg/sendmmsg vectors for batches of up to `cap` frames.
pub struct Batch {
    hdrs: Vec<libc::mmsghdr>,
    iovs: Vec<libc::iovec>,
    ctrl: Vec<[u64; CTRL / 8]>,
}

impl Batch {
    pub fn new(cap: usize) -> Self {
        // SAFETY: plain data.
        Batch {
            hdrs: (0..cap).map(|_| unsafe { zeroed() }).collect(),
            iovs: (0..cap)
                .map(|_| libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                })
                .collect(),
            ctrl: vec![[0; CTRL / 8]; cap],
        }
    }

    pub fn cap(&self) -> usize {
        self.hdrs.len()
    }

    /// Receive up to `bufs.len()` frames (each into its buffer) without blocking; metadata into
    /// `meta`. Returns how many (0 when nothing is waiting).
    ///
    /// # Safety
    /// Every pointer in `bufs` must be valid for writes of its length for the call.
    pub unsafe fn recv(
        &mut self,
        fd: i32,
        bufs: &[(*mut u8, usize)],
        meta: &mut Vec<RxMeta>,
    ) -> io::Result<usize> {
        meta.clear();
        let n = bufs.len().min(self.cap());
        for i in 0..n {
            self.iovs[i] = libc::iovec {
                iov_base: bufs[i].0 as *mut libc::c_void,
                iov_len: bufs[i].1,
            };
            let h = &mut self.hdrs[i].msg_hdr;
            h.msg_name = std::ptr::null_mut();
            h.msg_namelen = 0;
            h.msg_iov = &mut self.iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = self.ctrl[i].as_mut_ptr() as *mut libc::c_void;
            h.msg_controllen = CTRL as _;
            h.msg_flags = 0;
            self.hdrs[i].msg_len = 0;
        }
        let r = libc::recvmmsg(
            fd,
            self.hdrs.as_mut_ptr(),
            n as libc::c_uint,
            libc::MSG_DONTWAIT,
            std::ptr::null_mut(),
        );
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        for i in 0..r as usize {
            let h = &self.hdrs[i];
            let mut m = RxMeta {
                len: h.msg_len as usize,
                truncated: h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
                ..RxMeta::default()
            };
            let mut c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
            while !c.is_null() {
                let data = libc::CMSG_DATA(c);
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_TIMESTAMPNS {
                    let ts = std::ptr::read_unaligned(data as *const libc::timespec);
                    m.ts_real_ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
                } else if (*c).cmsg_level == libc::SOL_PACKET
                    && (*c).cmsg_type == libc::PACKET_AUXDATA
                {
                    let aux = std::ptr::read_unaligned(data as *const libc::tpacket_auxdata);
                    m.csum_not_ready = aux.tp_status & TP_STATUS_CSUMNOTREADY != 0;
                }
                c = libc::CMSG_NXTHDR(&h.msg_hdr, c);
            }
            meta.push(m);
        }
        Ok(r as usize)
    }

    /// Send the frames (each a whole Ethernet frame) on the socket's interface. Returns how
    /// many were sent; a frame whose send fails is skipped (counted by the caller as
    /// `frames.len() − sent`).
    ///
    /// # Safety
    /// Every pointer in `frames` must be valid for reads of its length for the call.
    pub unsafe fn send(&mut self, fd: i32, frames: &[(*const u8, usize)]) -> usize {
        let mut sent = 0;
        let mut k = 0;
        while k < frames.len() {
            let n = (frames.len() - k).min(self.cap());
            for i in 0..n {
                self.iovs[i] = libc::iovec {
                    iov_base: frames[k + i].0 as *mut libc::c_void,
                    iov_len: frames[k + i].1,
                };
                let h = &mut self.hdrs[i].msg_hdr;
                h.msg_name = std::ptr::null_mut();
                h.msg_namelen = 0;
                h.msg_iov = &mut self.iovs[i];
                h.msg_iovlen = 1;
                h.msg_control = std::ptr::null_mut();
                h.msg_controllen = 0;
                h.msg_flags = 0;
            }
            let r = libc::sendmmsg(fd, self.hdrs.as_mut_ptr(), n as libc::c_uint, 0);
            if r > 0 {
                sent += r as usize;
                k += r as usize;
            } else {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                k += 1; // this frame failed (ENOBUFS, EAGAIN, ...): skip it
            }
        }
        sent
    }
}
