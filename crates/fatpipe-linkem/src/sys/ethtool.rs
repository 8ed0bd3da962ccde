//! Switching segmentation and receive offloads off on an interface (the legacy ETHTOOL_S* ioctls,
//! so no ethtool binary is needed): a frame handed to the emulator must be one wire frame, not a
//! 64 KB TSO/GSO/GRO aggregate. Checksum offload may stay on: the emulator completes such
//! checksums itself.

use super::{cvt, Fd};
use std::io;

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_SGRO: u32 = 0x2c;

#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// TSO, GSO and GRO off on `ifname` (in the current namespace).
pub fn segmentation_offloads_off(ifname: &str) -> io::Result<()> {
    // SAFETY: plain socket call.
    let fd = Fd(cvt(unsafe {
        libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0)
    })?);
    for cmd in [ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO] {
        let mut v = EthtoolValue { cmd, data: 0 };
        // SAFETY: ifreq is plain data; ifr_data points at `v` for the call.
        let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
        if ifname.len() >= r.ifr_name.len() {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        for (d, s) in r.ifr_name.iter_mut().zip(ifname.bytes()) {
            *d = s as libc::c_char;
        }
        r.ifr_ifru.ifru_data = &mut v as *mut EthtoolValue as *mut libc::c_char;
        cvt(unsafe { libc::ioctl(fd.0, SIOCETHTOOL, &mut r) })?;
    }
    Ok(())
}
