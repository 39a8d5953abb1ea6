//! One clock handshake between the host and a GPU, as a capture records
//! it: what the readings were and what they bound. Placing launches on the
//! host's clock from them is [`timeline`](crate::timeline)'s job.

use crate::error::{Error, Result};

/// One handshake between the host and a GPU: the host read its clock,
/// wrote a flag into mapped host memory, a GPU thread that was spinning on
/// it read `%globaltimer` and answered, and the host read its clock again
/// when it saw the answer. The GPU's reading lies between the two host
/// readings, so the host time it corresponds to is the midpoint, within half
/// the round trip.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockSync {
    /// `CLOCK_REALTIME` (ns since the Unix epoch) just before the host
    /// wrote the flag.
    pub host_before_ns: u64,
    /// The GPU's `%globaltimer` (ns) when it saw the flag.
    pub gpu_ns: u64,
    /// `CLOCK_REALTIME` just after the host saw the answer.
    pub host_after_ns: u64,
    /// `CLOCK_BOOTTIME` read right after `host_after_ns` (0 where the host
    /// has no such clock): lets a trace on the realtime axis be converted to
    /// the boot-time axis that host-side Perfetto traces use.
    pub boottime_ns: u64,
}

impl ClockSync {
    /// The host's round trip, in ns.
    pub fn round_trip_ns(&self) -> u64 {
        self.host_after_ns.saturating_sub(self.host_before_ns)
    }

    /// The host time the GPU's reading is taken to correspond to: the
    /// midpoint of the round trip.
    pub fn host_mid_ns(&self) -> u64 {
        self.host_before_ns + self.round_trip_ns() / 2
    }

    /// How far the GPU's `%globaltimer` is ahead of the host's
    /// `CLOCK_REALTIME`, in ns (negative when behind).
    pub fn offset_ns(&self) -> i64 {
        (i128::from(self.gpu_ns) - i128::from(self.host_mid_ns())) as i64
    }

    /// The most the offset can be off: half the round trip, in ns.
    pub fn uncertainty_ns(&self) -> u64 {
        self.round_trip_ns().div_ceil(2)
    }

    /// Checks that the readings can be a handshake: both host readings and
    /// the GPU's are set, and the host's are in order.
    pub fn check(&self) -> Result<()> {
        if self.host_before_ns == 0 || self.gpu_ns == 0 {
            return Err(Error::Corrupt(format!(
                "clock sync with a zero reading: {self:?}"
            )));
        }
        if self.host_after_ns < self.host_before_ns {
            return Err(Error::Corrupt(format!(
                "clock sync whose host readings go backwards: {self:?}"
            )));
        }
        Ok(())
    }
}
