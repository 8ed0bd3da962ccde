//! `TCP_INFO` (Linux `struct tcp_info`, include/uapi/linux/tcp.h) read into our own `repr(C)`
//! mirror of its first 232 bytes (through `tcpi_snd_wnd`, Linux 5.4): the kernel copies min(our length, its size), so an older
//! kernel simply leaves the later fields zero, and newer fields beyond ours are not asked for.

use serde::Serialize;

#[repr(C)]
#[derive(Default, Clone, Copy)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub app_limited_bits: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt_us: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    /// The peer's advertised receive window, bytes (Linux 5.4+; 0 on older kernels).
    pub snd_wnd: u32,
}

/// One sample as the orchestrator reads it.
#[derive(Serialize)]
pub struct Sample {
    pub t: f64,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub rtt_s: f64,
    pub rttvar_s: f64,
    pub min_rtt_s: f64,
    pub total_retrans: u32,
    pub delivery_rate_bps: f64,
    pub bytes_acked: u64,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub ca_state: u8,
    /// The receiver's advertised window, bytes (0 where the kernel does not report it).
    pub snd_wnd: u32,
}

impl TcpInfo {
    pub fn read(fd: i32) -> std::io::Result<TcpInfo> {
        let mut info = TcpInfo::default();
        let mut len = std::mem::size_of::<TcpInfo>() as libc::socklen_t;
        // SAFETY: `info` is a plain repr(C) struct of integers, `len` its size; the kernel writes
        // at most `len` bytes and sets `len` to what it wrote.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                &mut info as *mut TcpInfo as *mut libc::c_void,
                &mut len,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(info)
    }

    pub fn sample(&self, t: f64) -> Sample {
        Sample {
            t,
            cwnd: self.snd_cwnd,
            // The kernel reports "infinite" (0x7fffffff) before the first reduction.
            ssthresh: self.snd_ssthresh,
            rtt_s: self.rtt_us as f64 * 1e-6,
            rttvar_s: self.rttvar_us as f64 * 1e-6,
            min_rtt_s: self.min_rtt_us as f64 * 1e-6,
            total_retrans: self.total_retrans,
            delivery_rate_bps: self.delivery_rate as f64 * 8.0,
            bytes_acked: self.bytes_acked,
            bytes_sent: self.bytes_sent,
            bytes_retrans: self.bytes_retrans,
            ca_state: self.ca_state,
            snd_wnd: self.snd_wnd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn the_mirror_has_the_kernels_offsets() {
        // include/uapi/linux/tcp.h: 8 one-byte fields, 24 u32 (rto ... total_retrans), then u64s.
        assert_eq!(offset_of!(TcpInfo, rto), 8);
        assert_eq!(offset_of!(TcpInfo, rtt_us), 68);
        assert_eq!(offset_of!(TcpInfo, snd_cwnd), 80);
        assert_eq!(offset_of!(TcpInfo, total_retrans), 100);
        assert_eq!(offset_of!(TcpInfo, pacing_rate), 104);
        assert_eq!(offset_of!(TcpInfo, bytes_acked), 120);
        assert_eq!(offset_of!(TcpInfo, min_rtt_us), 148);
        assert_eq!(offset_of!(TcpInfo, delivery_rate), 160);
        assert_eq!(offset_of!(TcpInfo, bytes_sent), 200);
        // tcpi_rcv_ooopack and tcpi_snd_wnd (Linux 5.4) follow tcpi_reord_seen.
        assert_eq!(offset_of!(TcpInfo, reord_seen), 220);
        assert_eq!(offset_of!(TcpInfo, snd_wnd), 228);
        assert_eq!(std::mem::size_of::<TcpInfo>(), 232);
    }
}
