//! Exact distributions of the terms whose dice are not independent units of one distribution:
//! keep or drop with `!` (every face of an explosion chain is ranked on its own, so how many units
//! there are is itself random) and a reroll `count` below the number of dice (the count picks the
//! lowest matching faces among all the dice).
//!
//! A term's value depends only on the multiset of its units' values: keep and drop sum the ranks
//! `lo..hi` of the sorted values, and ties among equal values change which die is kept, never the
//! sum. So a *pool* is a distribution over multisets, each cut down to a [`Core`] (`sketch.rs`)
//! and, when the kept ranks need it, the sum of every unit's contribution. The weights of one core
//! are a dense list over that total, so that merging two independent pools pairs their cores once
//! and convolves the totals in a tight loop.
//!
//! The work is bounded: one term may meet at most `MAX_CORES` (100 000) cores, and its merges
//! spend from the distribution's bound on work (`work.rs`); past either the distribution is
//! `distribution-too-large`, saying which bound it met, rather than a long wait.

use std::collections::BTreeMap;

use num_bigint::BigInt;
use num_traits::{One, Zero};
use rustc_hash::FxHashMap;

use super::sketch::{CoreId, Cores, Shape, contribution};
use super::{MAX_CHAIN, MAX_OUTCOMES, Weights, rerolled_face, too_large, unit_weights};
use crate::error::DiceError;
use crate::limits::DiceLimits;
use crate::rules::{RerollRule, TermRules};

pub(super) fn term_weights(
    rules: &TermRules,
    n: usize,
    limits: &DiceLimits,
    budget: &mut Budget,
) -> Result<Weights, DiceError> {
    let separate = rules.separate_explosions();
    if separate && limits.max_explosions > MAX_CHAIN {
        return Err(DiceError::DistributionUnsupported {
            reason: "maxExplosions above 1000",
        });
    }
    // With `!` every explosion adds a unit: up to `maxExplosions` more per die.
    let n_max = if separate {
        n * (limits.max_explosions as usize + 1)
    } else {
        n
    };
    let mut cores = Cores::new(Shape::new(rules, n, n_max)?);
    let partial = rules
        .reroll
        .filter(|r| r.count.is_some_and(|c| c > 0 && (c as usize) < n));
    let pool = match partial {
        Some(reroll) => partial_reroll_pool(rules, reroll, n, &mut cores, limits, budget)?,
        None => {
            let first = rerolled_face(rules, n, limits)?;
            let die = die_pool(rules, first, &mut cores, limits, budget)?;
            let mut pool = Pool::empty();
            for _ in 0..n {
                pool = pool.merge(&die, &mut cores, budget)?;
            }
            pool
        }
    };
    pool.into_weights(&cores, rules)
}

/// The dice of a term whose reroll has a `count` below its number of dice. DA: at most that many
/// of the initial dice matching are rerolled, "lowest faces first (earliest first among equal
/// faces)". Which of equal faces is rerolled does not change the multiset, so the initial faces
/// are placed value by value, lowest first: `k` of the dice left show the value (in `C(left, k)`
/// ways), and while fewer than `count` were chosen, the matching ones are rerolled.
fn partial_reroll_pool(
    rules: &TermRules,
    reroll: RerollRule,
    n: usize,
    cores: &mut Cores,
    limits: &DiceLimits,
    budget: &mut Budget,
) -> Result<Pool, DiceError> {
    let count = reroll.count.map_or(n, |c| c as usize);
    let replacement = replacement_face(rules, reroll, limits)?;
    let rerolled = die_pool(rules, replacement.clone(), cores, limits, budget)?;
    let (low, high) = rules.die.face_range();
    // (dice placed, dice rerolled) -> their pool. Every pool with `i` dice placed is over
    // `D^i`, D the denominator of one die's pool; the initial faces' `S^n` comes at the end.
    let mut states: BTreeMap<(usize, usize), Pool> = BTreeMap::from([((0, 0), Pool::empty())]);
    for v in low..=high {
        // A die that keeps the face `v`, over the same denominator as a rerolled one.
        let kept_face = Weights {
            lo: v,
            w: vec![replacement.denom.clone()],
            denom: replacement.denom.clone(),
            truncated: BigInt::zero(),
        };
        let fixed = die_pool(rules, kept_face, cores, limits, budget)?;
        let matches = reroll.at.matches(v);
        let mut next: BTreeMap<(usize, usize), Pool> = BTreeMap::new();
        for ((i, j), pool) in states {
            let mut with = pool;
            let mut ways = BigInt::one(); // C(n - i, k)
            for k in 0..=n - i {
                if k > 0 {
                    ways = ways * (n - i - k + 1) / k;
                    let die = if matches && k <= count - j {
                        &rerolled
                    } else {
                        &fixed
                    };
                    with = with.merge(die, cores, budget)?;
                }
                let r = if matches { k.min(count - j) } else { 0 };
                next.entry((i + k, j + r))
                    .or_insert_with(|| Pool {
                        cores: FxHashMap::default(),
                        denom: with.denom.clone(),
                    })
                    .add_scaled(&with, &ways, budget)?;
            }
        }
        states = next;
    }
    // Only the ways that placed every die are rolls.
    let mut pools = states
        .into_iter()
        .filter(|&((i, _), _)| i == n)
        .map(|(_, pool)| pool);
    let mut pool = pools.next().expect("every die is placed");
    for other in pools {
        pool.add_scaled(&other, &BigInt::one(), budget)?;
    }
    pool.denom *= num_traits::pow(BigInt::from(rules.die.face_count()), n);
    Ok(pool)
}

/// The face a die rerolled for matching ends with: `ro` rolls once more; `r` rolls until the face
/// no longer matches, and a die still matching after `maxRerolls` rerolls is cut off.
fn replacement_face(
    rules: &TermRules,
    reroll: RerollRule,
    limits: &DiceLimits,
) -> Result<Weights, DiceError> {
    let (low, high) = rules.die.face_range();
    let s = BigInt::from(rules.die.face_count());
    if reroll.once {
        return Weights::from_pairs((low..=high).map(|g| (g, BigInt::one())), s, BigInt::zero());
    }
    let l = limits.max_rerolls;
    if l > MAX_CHAIN {
        return Err(DiceError::DistributionUnsupported {
            reason: "maxRerolls above 1000",
        });
    }
    let m = BigInt::from((low..=high).filter(|&f| reroll.at.matches(f)).count());
    // A face that doesn't match, reached after k + 1 rerolls (k < L): m^k S^(L-1-k) over S^L.
    let per_face: BigInt = (0..l)
        .map(|k| {
            num_traits::pow(m.clone(), k as usize)
                * num_traits::pow(s.clone(), (l - 1 - k) as usize)
        })
        .sum();
    let pairs = (low..=high)
        .filter(|&g| !reroll.at.matches(g))
        .map(|g| (g, per_face.clone()));
    Weights::from_pairs(
        pairs,
        num_traits::pow(s, l as usize),
        num_traits::pow(m, l as usize),
    )
}

/// Weights over the total of the units' contributions: `w[i]` for total `lo + i`.
#[derive(Debug, Clone, Default)]
struct Totals {
    lo: i128,
    w: Vec<BigInt>,
}

impl Totals {
    fn point(total: i128, weight: BigInt) -> Totals {
        Totals {
            lo: total,
            w: vec![weight],
        }
    }

    /// The nonzero weights, by total.
    fn nonzero(&self) -> Vec<(i128, &BigInt)> {
        (self.lo..)
            .zip(&self.w)
            .filter(|(_, w)| !w.is_zero())
            .collect()
    }

    /// Widens the list to hold the totals `lo..=hi`.
    fn cover(&mut self, lo: i128, hi: i128) -> Result<(), DiceError> {
        if self.w.is_empty() {
            self.lo = lo;
        }
        let new_lo = self.lo.min(lo);
        let new_hi = (self.lo + self.w.len() as i128 - 1).max(hi);
        let width = (new_hi - new_lo + 1) as u128;
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

    /// Adds `other` moved by `shift`, times `factor`.
    fn add(&mut self, other: &Totals, shift: i128, factor: &BigInt) -> Result<(), DiceError> {
        let Some(last) = other.w.len().checked_sub(1) else {
            return Ok(());
        };
        let lo = other.lo.checked_add(shift).ok_or(DiceError::Overflow)?;
        let hi = lo.checked_add(last as i128).ok_or(DiceError::Overflow)?;
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

    /// Adds the distribution of the sum of `a` and `b` (given by their nonzero weights).
    fn add_product(
        &mut self,
        a: &[(i128, &BigInt)],
        b: &[(i128, &BigInt)],
    ) -> Result<(), DiceError> {
        let (Some(a0), Some(b0)) = (a.first(), b.first()) else {
            return Ok(());
        };
        let (a1, b1) = (a.last().expect("nonempty"), b.last().expect("nonempty"));
        let lo = a0.0.checked_add(b0.0).ok_or(DiceError::Overflow)?;
        let hi = a1.0.checked_add(b1.0).ok_or(DiceError::Overflow)?;
        self.cover(lo, hi)?;
        for &(ta, wa) in a {
            let row = (ta + b0.0 - self.lo) as usize;
            for &(tb, wb) in b {
                self.w[row + (tb - b0.0) as usize] += wa * wb;
            }
        }
        Ok(())
    }
}

/// A distribution over cut-down multisets: for each core, weights over its total, all over one
/// denominator. The mass missing from the weights is the rolls a safety limit cut off.
#[derive(Debug, Clone)]
struct Pool {
    cores: FxHashMap<CoreId, Totals>,
    denom: BigInt,
}

/// What the distribution may still spend (`work.rs`); a pool's steps are its merges.
use super::work::Work as Budget;

/// How many 64-bit words the largest of `weights` takes.
fn words<'a>(weights: impl IntoIterator<Item = &'a BigInt>) -> u64 {
    weights.into_iter().map(|w| w.bits()).max().unwrap_or(0) / 64 + 1
}

impl Pool {
    fn empty() -> Pool {
        Pool {
            cores: FxHashMap::from_iter([(Cores::EMPTY, Totals::point(0, BigInt::one()))]),
            denom: BigInt::one(),
        }
    }

    /// Independent `self` and `other` together.
    fn merge(
        &self,
        other: &Pool,
        cores: &mut Cores,
        budget: &mut Budget,
    ) -> Result<Pool, DiceError> {
        let theirs: Vec<(CoreId, Vec<(i128, &BigInt)>)> =
            other.cores.iter().map(|(&c, t)| (c, t.nonzero())).collect();
        let product = words(self.cores.values().flat_map(|t| &t.w))
            * words(other.cores.values().flat_map(|t| &t.w));
        let mut merged: FxHashMap<CoreId, Totals> = FxHashMap::default();
        for (&a, ta) in &self.cores {
            let ours = ta.nonzero();
            for (b, tb) in &theirs {
                // A merge of two cores is a lookup in a table that grows to millions of pairs:
                // measured at about three steps once it no longer fits the caches.
                budget.steps(3, 0)?;
                budget.steps(ours.len().saturating_mul(tb.len()) as u64, product)?;
                merged
                    .entry(cores.merge(a, *b)?)
                    .or_default()
                    .add_product(&ours, tb)?;
            }
        }
        Ok(Pool {
            cores: merged,
            denom: &self.denom * &other.denom,
        })
    }

    /// Adds `other`, over the same denominator, times `factor`.
    fn add_scaled(
        &mut self,
        other: &Pool,
        factor: &BigInt,
        budget: &mut Budget,
    ) -> Result<(), DiceError> {
        debug_assert_eq!(self.denom, other.denom);
        let entries: usize = other.cores.values().map(|t| t.w.len()).sum();
        budget.steps(
            entries as u64,
            words(other.cores.values().flat_map(|t| &t.w)) * words([factor]),
        )?;
        for (core, totals) in &other.cores {
            self.cores
                .entry(*core)
                .or_default()
                .add(totals, 0, factor)?;
        }
        Ok(())
    }

    /// The kept sum's distribution.
    fn into_weights(self, cores: &Cores, rules: &TermRules) -> Result<Weights, DiceError> {
        let mut pairs = Vec::new();
        let mut kept = BigInt::zero();
        for (core, totals) in &self.cores {
            for (total, w) in totals.nonzero() {
                kept += w;
                pairs.push((cores.kept_sum(*core, total, rules)?, w.clone()));
            }
        }
        let truncated = &self.denom - kept;
        Weights::from_pairs(pairs, self.denom, truncated)
    }
}

/// One die's units, its face drawn from `first` (weights over `first.denom`), as a pool. Its
/// denominator is `first.denom` times one that depends only on the rules and limits, so that
/// pools of dice with different first faces add up.
fn die_pool(
    rules: &TermRules,
    first: Weights,
    cores: &mut Cores,
    limits: &DiceLimits,
    budget: &mut Budget,
) -> Result<Pool, DiceError> {
    // A unit's contribution to the total, when the shape keeps one.
    let keeps_total = cores.shape().total;
    let counted = |value: i64| {
        if keeps_total {
            i128::from(contribution(rules, value))
        } else {
            0
        }
    };
    let Some(explode) = rules.explode.filter(|e| !e.compound) else {
        // One unit per die: its face with any `!!` chain, clamped.
        let unit = unit_weights(rules, first, limits, budget)?;
        let mut pool = FxHashMap::<CoreId, Totals>::default();
        for (value, w) in unit.pairs() {
            pool.entry(cores.unit(value)?).or_default().add(
                &Totals::point(counted(value), w.clone()),
                0,
                &BigInt::one(),
            )?;
        }
        return Ok(Pool {
            cores: pool,
            denom: unit.denom,
        });
    };
    let l = limits.max_explosions;
    if l > MAX_CHAIN {
        return Err(DiceError::DistributionUnsupported {
            reason: "maxExplosions above 1000",
        });
    }
    // `!`: each face of the chain is a unit. `pending` holds the chains whose last face exploded,
    // over `first.denom * S^j` after `j` explosions; a chain that ends then is scaled by
    // `S^(L - j)` into `done`, over the final `first.denom * S^L`.
    let (low, high) = rules.die.face_range();
    let sides = BigInt::from(rules.die.face_count());
    let scale: Vec<BigInt> = (0..=l)
        .map(|j| num_traits::pow(sides.clone(), (l - j) as usize))
        .collect();
    let faces = (low..=high)
        .map(|face| {
            let value = rules.clamp(face);
            Ok((cores.unit(value)?, counted(value), explode.at.matches(face)))
        })
        .collect::<Result<Vec<(CoreId, i128, bool)>, DiceError>>()?;
    let mut done = FxHashMap::<CoreId, Totals>::default();
    let mut pending = FxHashMap::<CoreId, Totals>::default();
    for (face, w) in first.pairs() {
        let value = rules.clamp(face);
        let unit = Totals::point(counted(value), w.clone());
        let (into, factor) = if explode.at.matches(face) {
            (&mut pending, &BigInt::one())
        } else {
            (&mut done, &scale[0])
        };
        into.entry(cores.unit(value)?)
            .or_default()
            .add(&unit, 0, factor)?;
    }
    // Every weight here is below `first.denom * S^L`; the faces that end a chain scale by up to
    // `S^L`, the others only add.
    let weight = words([&(&first.denom * &scale[0])]);
    let ending = faces.iter().filter(|f| !f.2).count();
    let per_face = (ending as u64 * weight * words([&scale[0]])
        + (faces.len() - ending) as u64 * weight)
        / faces.len().max(1) as u64;
    for ended in &scale[1..] {
        if pending.is_empty() {
            break;
        }
        let mut again = FxHashMap::<CoreId, Totals>::default();
        for (&core, totals) in &pending {
            budget.steps(
                faces.len().saturating_mul(1 + totals.w.len()) as u64,
                per_face,
            )?;
            for &(unit, shift, explodes) in &faces {
                let (into, factor) = if explodes {
                    (&mut again, &BigInt::one())
                } else {
                    (&mut done, ended)
                };
                into.entry(cores.merge(core, unit)?)
                    .or_default()
                    .add(totals, shift, factor)?;
            }
        }
        pending = again;
    }
    // A chain still pending needs one explosion past the limit: it is cut off.
    Ok(Pool {
        cores: done,
        denom: first.denom * &scale[0],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{DiceTerm, Die, Modifier};

    #[test]
    fn work_past_the_budget_is_refused() {
        let term = DiceTerm::new(
            4,
            Die::Sides(6),
            vec![Modifier::Explode(None), Modifier::KeepHighest(3)],
        );
        let rules = TermRules::new(&term);
        let limits = DiceLimits::DEFAULT;
        let mut plenty = Budget::new(super::super::MAX_WORK);
        assert!(term_weights(&rules, 4, &limits, &mut plenty).is_ok());
        let err = term_weights(&rules, 4, &limits, &mut Budget::new(100_000)).unwrap_err();
        expect_test::expect![
            "the distribution needs more than 1 500 000 000 word operations to work out"
        ]
        .assert_eq(&err.to_string());
    }
}
