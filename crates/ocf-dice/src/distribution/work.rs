//! The bound on the work one distribution may take, counted in operations, never on a clock.
//!
//! Every method estimates what it is about to do before it does it and spends that from one
//! [`Work`] shared by the whole dice value, so a distribution past the bound is refused before the
//! long computation starts, and the same value is refused on every machine.
//!
//! The unit is a 64-bit word operation: a product of an `a`-word by a `b`-word integer costs what
//! num-bigint's multiplication costs ([`mul_cost`]), a sum of `a` words costs `a`, and each step
//! of a loop (an allocation, a map lookup) [`STEP`] more. On the machine of `docs/perf.md` a
//! unit is about 0.6 ns of CPU time (the estimates were calibrated there, each method against its
//! measured time), so [`MAX_WORK`] is about a second.

use crate::error::{DiceError, DistributionLimit};

/// The most work one distribution may take, in word operations.
pub const MAX_WORK: u64 = 1_500_000_000;
/// What one step costs besides its arithmetic (the allocation of a product, a lookup).
pub(super) const STEP: u64 = 100;
/// The most 64-bit words the weights of one distribution may hold at once (64 MiB).
pub const MAX_WORDS: u64 = 8 << 20;

/// What a distribution may still spend.
#[derive(Debug, Clone)]
pub(super) struct Work {
    left: u64,
}

impl Work {
    pub fn new(budget: u64) -> Work {
        Work { left: budget }
    }

    /// Spends `cost` word operations, or refuses with `distribution-too-large`.
    pub fn spend(&mut self, cost: u64) -> Result<(), DiceError> {
        self.left = self
            .left
            .checked_sub(cost)
            .ok_or(DiceError::DistributionTooLarge {
                limit: DistributionLimit::Work,
            })?;
        Ok(())
    }

    /// Spends `steps` steps of `words` word operations each.
    pub fn steps(&mut self, steps: u64, words: u64) -> Result<(), DiceError> {
        self.spend(steps.saturating_mul(STEP.saturating_add(words)))
    }

    /// What is left to spend.
    pub fn left(&self) -> u64 {
        self.left
    }

    /// Whether `cost` could still be spent.
    pub fn affords(&self, cost: u64) -> bool {
        cost <= self.left
    }
}

/// How many 64-bit words an integer of `bits` bits takes.
pub(super) fn words_of_bits(bits: u64) -> u64 {
    bits / 64 + 1
}

/// The work of multiplying an `a`-word by a `b`-word integer as num-bigint does: long
/// multiplication while the shorter has at most 32 words, beyond that Karatsuba and Toom-3. Those
/// were measured (`docs/perf.md`) at about `5·s^1.585` per `s`-word square block, the allocations
/// and additions of the splits included.
pub(super) fn mul_cost(a: u64, b: u64) -> u64 {
    let (short, long) = (a.min(b).max(1), a.max(b).max(1));
    if short <= 32 {
        return short.saturating_mul(long);
    }
    let blocks = long.div_ceil(short);
    let block = 5.0 * (short as f64).powf(1.585);
    blocks.saturating_mul(block as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_past_the_bound_is_refused() {
        let mut work = Work::new(1_000);
        assert!(work.spend(600).is_ok());
        assert!(work.affords(400));
        assert_eq!(
            work.spend(401).unwrap_err().code(),
            "distribution-too-large"
        );
    }

    #[test]
    fn products_cost_as_num_bigint_multiplies() {
        assert_eq!(mul_cost(3, 10), 30);
        assert_eq!(mul_cost(32, 1000), 32_000);
        // Past long multiplication, a square block costs less than its `s * s`.
        assert!(mul_cost(1000, 1000) < 1_000_000);
        assert!(mul_cost(1000, 4000) >= 4 * mul_cost(1000, 1000));
    }
}
