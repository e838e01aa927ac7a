//! Keep and drop over `n` independent alike units: the sum of the contributions of the units
//! ranked `lo..hi` (lowest first), as order statistics, never by listing rolls.
//!
//! Keeping one unit from an end (`kh1`, `kl1`: advantage, `20d20kh1`) is a power of the
//! cumulative distribution ([`keep_one`]): `P(highest <= v) = F(v)^n`. Otherwise two methods, each
//! picked where its estimated work is smaller:
//!
//! - **By ranks** ([`by_ranks`]): the unit's values are taken from lowest to highest, and how
//!   many of the dice left show each value says which ranks they fill (`C(left, c)` ways). Only
//!   the dice placed in the kept ranks need a distribution over their sum: while fewer than `lo`
//!   are placed nothing is kept yet, and the weight of "`i` dice, all below this value" is
//!   `C(n, i)·F^i`; once `hi` are placed the rest lie above and only their weight counts. So
//!   the work grows with the kept dice (`kh3` of 1000 dice is cheap) and not with `n`.
//! - **Few dropped** ([`few_dropped`], when the kept ranks reach one end): condition on the value
//!   `a` of the lowest kept unit and the `c <= d` units below it. The units at `a` or above are
//!   independent, each of the unit restricted to values `>= a` (`H_a`); of them the lowest
//!   `d - c` are dropped, which must all show `a`. Summed over how many show `a`, that is
//!   `H_a^(n-c)` shifted down by the `d - c` dropped, less the terms where too few show `a`
//!   (those need `H_(a+1)^(n-c-e)`). So it needs only the powers `n - d ..= n` of each
//!   restricted unit, and its work grows with the dropped dice (`1000d6kh999` is cheap). The
//!   kept ranks at the bottom (`dh`, `kl`) are the same with the order of values reversed.

use num_bigint::BigInt;
use num_traits::{One, Zero};

use super::poly;
use super::work::{STEP, Work, mul_cost, words_of_bits};
use super::{MAX_OUTCOMES, Weights, too_large};
use crate::error::DiceError;

/// One value a unit can take: its contribution to the kept sum and its weight. A unit is a list
/// of these in rank order, lowest first.
#[derive(Debug, Clone)]
struct Value {
    contribution: i64,
    weight: BigInt,
}

/// A dense polynomial over kept sums: `w[i]` is the weight of the sum `lo + i`.
#[derive(Debug, Clone, Default)]
struct Dense {
    lo: i64,
    w: Vec<BigInt>,
}

impl Dense {
    fn point(at: i64, weight: BigInt) -> Dense {
        Dense {
            lo: at,
            w: vec![weight],
        }
    }

    fn is_empty(&self) -> bool {
        self.w.is_empty()
    }

    /// Adds `factor` times `other` moved up by `shift`.
    fn add(&mut self, other: &Dense, shift: i64, factor: &BigInt) -> Result<(), DiceError> {
        let Some(last) = other.w.len().checked_sub(1) else {
            return Ok(());
        };
        let lo = other.lo.checked_add(shift).ok_or(DiceError::Overflow)?;
        let hi = lo.checked_add(last as i64).ok_or(DiceError::Overflow)?;
        self.cover(lo, hi)?;
        let at = (lo - self.lo) as usize;
        for (i, w) in other.w.iter().enumerate().filter(|(_, w)| !w.is_zero()) {
            if factor.is_one() {
                self.w[at + i] += w;
            } else {
                self.w[at + i] += w * factor;
            }
        }
        Ok(())
    }

    /// Subtracts `factor` times `other` moved up by `shift`.
    fn subtract(&mut self, other: &Dense, shift: i64, factor: &BigInt) -> Result<(), DiceError> {
        self.add(other, shift, &-factor)
    }

    fn cover(&mut self, lo: i64, hi: i64) -> Result<(), DiceError> {
        if self.w.is_empty() {
            self.lo = lo;
        }
        let new_lo = self.lo.min(lo);
        let new_hi = (self.lo + self.w.len() as i64 - 1).max(hi);
        let width = (i128::from(new_hi) - i128::from(new_lo) + 1) as u128;
        if width > u128::from(MAX_OUTCOMES) {
            return Err(too_large(u64::try_from(width).unwrap_or(u64::MAX)));
        }
        if new_lo < self.lo {
            let grow = (self.lo - new_lo) as usize;
            self.w
                .splice(0..0, std::iter::repeat_n(BigInt::zero(), grow));
            self.lo = new_lo;
        }
        self.w.resize(width as usize, BigInt::zero());
        Ok(())
    }

    /// The same polynomial without zero weights at its ends.
    fn trimmed(mut self) -> Dense {
        while self.w.last().is_some_and(Zero::is_zero) {
            self.w.pop();
        }
        let zeros = self.w.iter().take_while(|w| w.is_zero()).count();
        self.w.drain(..zeros);
        self.lo += zeros as i64;
        self
    }

    fn words(&self) -> u64 {
        words_of_bits(self.w.iter().map(BigInt::bits).max().unwrap_or(0))
    }
}

/// The distribution of the kept sum, over `unit.denom^n`.
pub(super) fn order_statistic(
    unit: &Weights,
    n: usize,
    lo: usize,
    hi: usize,
    contribution: impl Fn(i64) -> i64,
    work: &mut Work,
) -> Result<Weights, DiceError> {
    let values: Vec<Value> = unit
        .pairs()
        .map(|(v, w)| Value {
            contribution: contribution(v),
            weight: w.clone(),
        })
        .collect();
    let denom = num_traits::pow(unit.denom.clone(), n);
    let (cmin, cmax) = values.iter().fold((i64::MAX, i64::MIN), |(a, b), v| {
        (a.min(v.contribution), b.max(v.contribution))
    });
    let kept = hi.saturating_sub(lo);
    let spread = u64::try_from(i128::from(cmax) - i128::from(cmin)).unwrap_or(0);
    let width = (kept as u64).saturating_mul(spread) + 1;
    if width > MAX_OUTCOMES {
        return Err(too_large(width));
    }
    let mass: BigInt = values.iter().map(|v| &v.weight).sum();
    let dense = if kept == 0 || values.is_empty() {
        Dense::point(0, num_traits::pow(mass, n))
    } else if kept == 1 && (hi == n || lo == 0) {
        // Keep one from an end (`20d20kh1`, advantage): a power of the cumulative distribution.
        if lo == 0 {
            let mut reversed = values;
            reversed.reverse();
            keep_one(&reversed, n, &mass, work)?
        } else {
            keep_one(&values, n, &mass, work)?
        }
    } else {
        let ranks = by_ranks_cost(&values, n, lo, hi, width);
        let few = if hi == n {
            Some((few_dropped_cost(&values, n, lo, work.left()), false))
        } else if lo == 0 {
            Some((few_dropped_cost(&values, n, n - hi, work.left()), true))
        } else {
            None
        };
        match few {
            Some((cost, reversed)) if cost < ranks => {
                if !work.affords(cost) {
                    work.spend(cost)?;
                }
                if reversed {
                    let mut reversed = values;
                    reversed.reverse();
                    few_dropped(&reversed, n, n - hi, work)?
                } else {
                    few_dropped(&values, n, lo, work)?
                }
            }
            _ => {
                if !work.affords(ranks) {
                    work.spend(ranks)?;
                }
                by_ranks(&values, n, lo, hi, work)?
            }
        }
    };
    let pairs = dense
        .w
        .into_iter()
        .enumerate()
        .map(|(i, w)| (dense.lo + i as i64, w));
    let pairs: Vec<(i64, BigInt)> = pairs.collect();
    let kept_mass: BigInt = pairs.iter().map(|(_, w)| w).sum();
    Weights::from_pairs(pairs, denom.clone(), denom - kept_mass)
}

/// The highest of `n` units, `values` in rank order: the unit at value `v` is the highest with
/// weight `(B + w)^n - B^n`, `B` the weight of the values below it (`F(v)^n - F(v-1)^n`, the
/// cumulative distribution's power). Each power is found from the one before by repeated squaring
/// of the new cumulative weight, so the work is `m` powers, not a pass per rank.
fn keep_one(
    values: &[Value],
    n: usize,
    mass: &BigInt,
    work: &mut Work,
) -> Result<Dense, DiceError> {
    let words = words_of_bits(mass.bits().saturating_mul(n as u64));
    // Per value: a power by squaring (about log2(n) products of growing size) and a subtraction.
    let per =
        (64 - (n as u64).leading_zeros() as u64 + 1).saturating_mul(STEP + mul_cost(words, words));
    work.spend((values.len() as u64).saturating_mul(per))?;
    let mut result = Dense::default();
    let mut below = BigInt::zero();
    let mut below_n = BigInt::zero();
    let exponent = u32::try_from(n).map_err(|_| DiceError::Overflow)?;
    for value in values {
        below += &value.weight;
        let up_to = num_traits::Pow::pow(&below, exponent);
        let weight = &up_to - &below_n;
        below_n = up_to;
        if !weight.is_zero() {
            result.add(&Dense::point(value.contribution, BigInt::one()), 0, &weight)?;
        }
    }
    Ok(result.trimmed())
}

/// Binomial coefficients `C(n, 0..=n)`.
fn binomials(n: usize) -> Vec<BigInt> {
    let mut row = Vec::with_capacity(n + 1);
    let mut c = BigInt::one();
    for k in 0..=n {
        if k > 0 {
            c = c * (n - k + 1) / k;
        }
        row.push(c.clone());
    }
    row
}

/// `C(n, k)`, in `min(k, n - k)` steps.
fn binomial(n: usize, k: usize) -> BigInt {
    let k = k.min(n - k);
    (1..=k).fold(BigInt::one(), |c, j| c * (n - j + 1) / j)
}

/// `x^0 ..= x^n`.
fn powers(x: &BigInt, n: usize) -> Vec<BigInt> {
    std::iter::successors(Some(BigInt::one()), |p| Some(p * x))
        .take(n + 1)
        .collect()
}

fn by_ranks_cost(values: &[Value], n: usize, lo: usize, hi: usize, width: u64) -> u64 {
    let m = values.len() as u64;
    let mass_bits: u64 = values.iter().map(|v| &v.weight).sum::<BigInt>().bits();
    let words = words_of_bits(mass_bits.saturating_mul(n as u64));
    let kept = (hi - lo) as u64;
    let product = STEP + mul_cost(words, words);
    // Per value: the kept states' moves (about k^2/2 of them, each over a list up to `width`),
    // the moves out of the states below `lo`, and the powers and binomials.
    let moves = (kept * kept / 2 + kept).saturating_mul(width / 2 + 1);
    let below = (lo as u64).saturating_mul(kept + 1);
    m.saturating_mul(
        moves
            .saturating_add(below)
            .saturating_mul(product)
            .saturating_add(6 * n as u64 * (STEP + words)),
    )
}

/// The method by ranks (see the module's comment).
fn by_ranks(
    values: &[Value],
    n: usize,
    lo: usize,
    hi: usize,
    work: &mut Work,
) -> Result<Dense, DiceError> {
    let total: BigInt = values.iter().map(|v| &v.weight).sum();
    // `states[i - lo]`: the kept sum's weights with `i` dice placed, all below the value taken.
    let mut states: Vec<Dense> = vec![Dense::default(); hi - lo];
    if lo == 0 {
        states[0] = Dense::point(0, BigInt::one());
    }
    let choose_n = binomials(n);
    let mut result = Dense::default();
    let mut below = BigInt::zero();
    for value in values {
        let w = &value.weight;
        let c_v = value.contribution;
        let above = &total - &below - w;
        let pw = powers(w, n);
        let pa = powers(&above, n);
        let pb = powers(&below, lo);
        let pt = powers(&(w + &above), n);
        // `Σ_(c >= r) C(left, c)·w^c·above^(left-c)`: the weight of placing at least `r` of the
        // `left` dice here and the rest above, summed from whichever end has fewer terms.
        let at_least = |left: usize, r: usize| -> BigInt {
            if r > left {
                return BigInt::zero();
            }
            let mut choose = BigInt::one();
            if left - r < r {
                let mut sum = BigInt::zero();
                for j in 0..=(left - r) {
                    if j > 0 {
                        choose = choose * (left - j + 1) / j;
                    }
                    sum += &choose * &pw[left - j] * &pa[j];
                }
                sum
            } else {
                let mut sum = BigInt::zero();
                for c in 0..r {
                    if c > 0 {
                        choose = choose * (left - c + 1) / c;
                    }
                    sum += &choose * &pw[c] * &pa[left - c];
                }
                &pt[left] - sum
            }
        };
        // The kept states, highest first, so each is read before anything moves into it.
        for i in (lo..hi).rev() {
            let source = std::mem::take(&mut states[i - lo]);
            if source.is_empty() {
                continue;
            }
            let left = n - i;
            let words = source.words() + words_of_bits(pw[left].bits() + left as u64);
            work.steps((hi - i) as u64 * source.w.len() as u64, words * words)?;
            let mut choose = BigInt::one();
            for c in 1..(hi - i) {
                choose = choose * (left - c + 1) / c;
                let factor = &choose * &pw[c];
                let shift = (c as i64).checked_mul(c_v).ok_or(DiceError::Overflow)?;
                states[i + c - lo].add(&source, shift, &factor)?;
            }
            let shift = ((hi - i) as i64)
                .checked_mul(c_v)
                .ok_or(DiceError::Overflow)?;
            result.add(&source, shift, &at_least(left, hi - i))?;
            states[i - lo] = source;
        }
        // The states below `lo`: `C(n, i)·below^i` for `i` dice, all below this value.
        for i in 0..lo {
            let left = n - i;
            let weight = &choose_n[i] * &pb[i];
            if weight.is_zero() {
                continue;
            }
            let words = words_of_bits(weight.bits() + pw[left].bits() + left as u64);
            work.steps((hi - lo + 1) as u64 * 3, words * words)?;
            let mut choose = binomial(left, lo - i);
            for c in (lo - i)..(hi - i) {
                if c > lo - i {
                    choose = choose * (left - c + 1) / c;
                }
                let kept = (i + c - lo) as i64;
                let at = kept.checked_mul(c_v).ok_or(DiceError::Overflow)?;
                let factor = &weight * &choose * &pw[c];
                states[i + c - lo].add(&Dense::point(at, BigInt::one()), 0, &factor)?;
            }
            let at = ((hi - lo) as i64)
                .checked_mul(c_v)
                .ok_or(DiceError::Overflow)?;
            let factor = weight * at_least(left, hi - i);
            result.add(&Dense::point(at, BigInt::one()), 0, &factor)?;
        }
        below += w;
    }
    Ok(result.trimmed())
}

/// The estimate of [`few_dropped`], given up once it passes `budget` (then refused anyway): the
/// restricted units `H_t` are built from the highest value down, one value added per step, so the
/// estimate itself is linear in the unit's values and never the quadratic work it guards against
/// (`2d20000kh1` took seconds to be refused when each `H_t` was summed afresh).
fn few_dropped_cost(values: &[Value], n: usize, d: usize, budget: u64) -> u64 {
    let (cmin, cmax) = values.iter().fold((i64::MAX, i64::MIN), |(a, b), v| {
        (a.min(v.contribution), b.max(v.contribution))
    });
    let spread = usize::try_from(i128::from(cmax) - i128::from(cmin) + 1)
        .unwrap_or(usize::MAX)
        .min(MAX_OUTCOMES as usize + 1);
    let mut h = vec![BigInt::zero(); spread];
    // The nonzero span of `h` (what trimming it would keep), and its mass.
    let mut span: Option<(usize, usize)> = None;
    let mut mass = BigInt::zero();
    let mut cost = 0u64;
    for v in values.iter().rev() {
        let at = usize::try_from(v.contribution - cmin).unwrap_or(usize::MAX);
        if let Some(slot) = h.get_mut(at) {
            *slot += &v.weight;
            if !slot.is_zero() {
                span = Some(span.map_or((at, at), |(a, b)| (a.min(at), b.max(at))));
            }
        }
        mass += &v.weight;
        let trimmed = match span {
            Some((a, b)) => &h[a..=b],
            None => &h[..0],
        };
        let len = trimmed.len() as u64;
        let power = poly::power_cost(trimmed, (n - d).max(1) as u32);
        let width = len.saturating_sub(1) * n as u64 + 1;
        let words = words_of_bits(mass.bits()) * n as u64;
        let steps = d as u64 * len + ((d + 1) * (d + 2) / 2) as u64;
        cost = cost.saturating_add(power).saturating_add(
            steps
                .saturating_mul(width)
                .saturating_mul(STEP + mul_cost(words, words_of_bits(64 * d as u64))),
        );
        if cost > budget {
            break;
        }
    }
    cost
}

/// The method for few dropped at the bottom (see the module's comment): `d` units dropped from
/// the lowest, the rest kept; `values` in rank order.
fn few_dropped(values: &[Value], n: usize, d: usize, work: &mut Work) -> Result<Dense, DiceError> {
    let m = values.len();
    let (cmin, cmax) = values.iter().fold((i64::MAX, i64::MIN), |(a, b), v| {
        (a.min(v.contribution), b.max(v.contribution))
    });
    let spread = usize::try_from(i128::from(cmax) - i128::from(cmin) + 1)
        .map_err(|_| DiceError::Overflow)?;
    if spread as u64 > MAX_OUTCOMES {
        return Err(too_large(spread as u64));
    }
    // `pow[t][j]`: H_t^(n - d + j), for j in 0..=d; H_m is empty.
    let mut pow: Vec<Vec<Dense>> = Vec::with_capacity(m + 1);
    for t in 0..m {
        let mut h = vec![BigInt::zero(); spread];
        for v in &values[t..] {
            h[(v.contribution - cmin) as usize] += &v.weight;
        }
        let h = Dense { lo: cmin, w: h }.trimmed();
        let mut list = Vec::with_capacity(d + 1);
        let base = poly::power(&h.w, (n - d) as u32, work)?;
        let mut current = Dense {
            lo: h
                .lo
                .checked_mul((n - d) as i64)
                .ok_or(DiceError::Overflow)?,
            w: base,
        };
        for _ in 0..d {
            let next = Dense {
                lo: current.lo.checked_add(h.lo).ok_or(DiceError::Overflow)?,
                w: poly::product(&current.w, &h.w, work)?,
            };
            list.push(std::mem::replace(&mut current, next));
        }
        list.push(current);
        pow.push(list);
    }
    pow.push(vec![Dense::default(); d + 1]);
    let choose_n = binomials(n);
    let mut result = Dense::default();
    let mut below = BigInt::zero();
    for (t, value) in values.iter().enumerate() {
        let w = &value.weight;
        let c_v = value.contribution;
        let pb = powers(&below, d);
        let pw = powers(w, d);
        for c in 0..=d {
            let outer = &choose_n[c] * &pb[c];
            if outer.is_zero() {
                continue;
            }
            // The `d - c` dropped units at `a` come off the sum.
            let down = -(((d - c) as i64)
                .checked_mul(c_v)
                .ok_or(DiceError::Overflow)?);
            let h = &pow[t][d - c];
            work.steps(h.w.len() as u64 * (d - c + 2) as u64, h.words() * 2)?;
            result.add(h, down, &outer)?;
            let mut choose = BigInt::one();
            for e in 0..=(d - c) {
                if e > 0 {
                    choose = choose * (n - c - e + 1) / e;
                }
                let rest = &pow[t + 1][d - c - e];
                let shift = down
                    .checked_add((e as i64).checked_mul(c_v).ok_or(DiceError::Overflow)?)
                    .ok_or(DiceError::Overflow)?;
                let factor = &outer * &choose * &pw[e];
                result.subtract(rest, shift, &factor)?;
            }
        }
        below += w;
    }
    Ok(result.trimmed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unit(weights: &[(i64, u64)]) -> Vec<Value> {
        weights
            .iter()
            .map(|&(c, w)| Value {
                contribution: c,
                weight: BigInt::from(w),
            })
            .collect()
    }

    /// Every sequence of values, one by one: the reference the methods must match.
    fn brute(values: &[Value], n: usize, lo: usize, hi: usize) -> Dense {
        let mut result = Dense::default();
        let m = values.len();
        let mut idx = vec![0usize; n];
        loop {
            let mut sorted = idx.clone();
            sorted.sort_unstable();
            let sum: i64 = sorted[lo..hi].iter().map(|&t| values[t].contribution).sum();
            let weight: BigInt = idx.iter().map(|&t| values[t].weight.clone()).product();
            result
                .add(&Dense::point(sum, BigInt::one()), 0, &weight)
                .unwrap();
            let mut k = 0;
            loop {
                if k == n {
                    return result.trimmed();
                }
                idx[k] += 1;
                if idx[k] < m {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }

    fn same(a: &Dense, b: &Dense) -> bool {
        let a = a.clone().trimmed();
        let b = b.clone().trimmed();
        (a.w.is_empty() && b.w.is_empty()) || (a.lo == b.lo && a.w == b.w)
    }

    proptest! {
        /// Both methods give what listing every roll gives, contributions out of rank order
        /// (counting) included.
        #[test]
        fn methods_agree_with_listing_rolls(
            weights in proptest::collection::vec((-2i64..4, 1u64..5), 1..4),
            n in 1usize..5,
            lo in 0usize..5,
            span in 1usize..5,
        ) {
            let values = unit(&weights);
            let lo = lo.min(n - 1);
            let hi = (lo + span).min(n);
            let expected = brute(&values, n, lo, hi);
            let mut work = Work::new(u64::MAX);
            prop_assert!(same(&by_ranks(&values, n, lo, hi, &mut work).unwrap(), &expected));
            if hi == n && lo + 1 == n {
                let mass: BigInt = values.iter().map(|v| &v.weight).sum();
                prop_assert!(same(&keep_one(&values, n, &mass, &mut work).unwrap(), &expected));
            }
            if hi == n {
                prop_assert!(same(&few_dropped(&values, n, lo, &mut work).unwrap(), &expected));
            }
            if lo == 0 {
                let mut reversed = values.clone();
                reversed.reverse();
                prop_assert!(same(&few_dropped(&reversed, n, n - hi, &mut work).unwrap(), &expected));
            }
        }
    }
}
