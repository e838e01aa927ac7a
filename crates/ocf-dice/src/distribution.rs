//! Exact distributions of dice values, as rationals.
//!
//! Each die of a term is a *unit* whose value follows one distribution: its face, rerolled, then
//! exploded, then clamped (`rules.rs` gives the order). The dice of a term are independent and
//! alike, so a term is an n-fold convolution of its unit, or with keep and drop an order statistic
//! worked out value by value (how many dice show each value, weighted by binomials), never by
//! listing every outcome. Terms and the flat part are then convolved. The terms whose dice are not
//! independent alike units (keep or drop with `!`, a reroll `count` below the dice) are worked out
//! over multisets of unit values instead (`distribution/pool.rs`).
//!
//! Internally every distribution is a list of integer weights over one common denominator, so that
//! the inner loops multiply and add integers and never reduce fractions. A distribution may be
//! *short*: the weight of the rolls the roller would stop with `safety-limit-exceeded` (too many
//! explosions or rerolls) is kept apart as `truncated`.

use std::collections::BTreeMap;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

use crate::error::DiceError;
use crate::limits::DiceLimits;
use crate::rules::TermRules;
use crate::value::{DiceTerm, DiceValue};

mod pool;
mod sketch;

/// The most outcomes (distinct totals, or faces of a die) a distribution may span.
pub const MAX_OUTCOMES: u64 = 20_000;
/// Reroll and explosion limits above this are not followed exactly.
const MAX_CHAIN: u32 = 1_000;

/// Outcome -> probability, plus the probability of the rolls cut off by a safety limit; the
/// outcomes' probabilities sum to `1 - truncated`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distribution {
    pub outcomes: BTreeMap<i64, BigRational>,
    pub truncated: BigRational,
}

impl Distribution {
    pub fn probability(&self, outcome: i64) -> BigRational {
        self.outcomes
            .get(&outcome)
            .cloned()
            .unwrap_or_else(BigRational::zero)
    }

    /// The probabilities as floats, accurate to the last bit or so even when tiny.
    pub fn to_f64(&self) -> Vec<(i64, f64)> {
        self.outcomes
            .iter()
            .map(|(&k, p)| (k, ratio_to_f64(p)))
            .collect()
    }
}

/// `n / d` as the nearest-ish f64, for any size of numerator and denominator (a plain
/// `n.to_f64() / d.to_f64()` is `inf / inf` for 6^-400).
pub fn ratio_to_f64(r: &BigRational) -> f64 {
    let (n, d) = (r.numer(), r.denom());
    if n.is_zero() {
        return 0.0;
    }
    // Scale so that the integer quotient has about 64 significant bits.
    let shift = d.bits() as i64 - n.bits() as i64 + 64;
    let q = if shift >= 0 {
        (n << shift as usize) / d
    } else {
        n / (d << (-shift) as usize)
    };
    let mut f = q.to_f64().unwrap_or(f64::NAN);
    let mut e = -shift;
    // Apply 2^e in steps that stay within f64's exponent range.
    while e != 0 {
        let step = e.clamp(-1000, 1000);
        f *= 2f64.powi(step as i32);
        e -= step;
    }
    f
}

/// A dense sub-distribution: weight `w[i] / denom` for outcome `lo + i`, and `truncated / denom`.
#[derive(Debug, Clone)]
struct Weights {
    lo: i64,
    w: Vec<BigInt>,
    denom: BigInt,
    truncated: BigInt,
}

fn too_large(outcomes: u64) -> DiceError {
    DiceError::DistributionTooLarge {
        outcomes,
        max: MAX_OUTCOMES,
    }
}

impl Weights {
    fn point(value: i64) -> Weights {
        Weights {
            lo: value,
            w: vec![BigInt::one()],
            denom: BigInt::one(),
            truncated: BigInt::zero(),
        }
    }

    /// Builds from (outcome, weight) pairs.
    fn from_pairs(
        pairs: impl IntoIterator<Item = (i64, BigInt)>,
        denom: BigInt,
        truncated: BigInt,
    ) -> Result<Weights, DiceError> {
        let map = pairs
            .into_iter()
            .fold(BTreeMap::<i64, BigInt>::new(), |mut m, (k, w)| {
                if !w.is_zero() {
                    *m.entry(k).or_default() += w;
                }
                m
            });
        let (Some((&lo, _)), Some((&hi, _))) = (map.first_key_value(), map.last_key_value()) else {
            return Ok(Weights {
                lo: 0,
                w: Vec::new(),
                denom,
                truncated,
            });
        };
        let width = (i128::from(hi) - i128::from(lo) + 1) as u128;
        if width > u128::from(MAX_OUTCOMES) {
            return Err(too_large(u64::try_from(width).unwrap_or(u64::MAX)));
        }
        let mut w = vec![BigInt::zero(); width as usize];
        for (k, v) in map {
            w[(k - lo) as usize] = v;
        }
        Ok(Weights {
            lo,
            w,
            denom,
            truncated,
        })
    }

    fn pairs(&self) -> impl Iterator<Item = (i64, &BigInt)> {
        self.w
            .iter()
            .enumerate()
            .filter(|(_, w)| !w.is_zero())
            .map(|(i, w)| (self.lo + i as i64, w))
    }

    fn hi(&self) -> i64 {
        self.lo + self.w.len() as i64 - 1
    }

    /// Every outcome mapped through `f` (merging those that meet).
    fn map(&self, f: impl Fn(i64) -> Result<i64, DiceError>) -> Result<Weights, DiceError> {
        let pairs = self
            .pairs()
            .map(|(k, w)| Ok((f(k)?, w.clone())))
            .collect::<Result<Vec<_>, _>>()?;
        Weights::from_pairs(pairs, self.denom.clone(), self.truncated.clone())
    }

    /// The distribution of the sum of independent `self` and `other`.
    fn convolve(&self, other: &Weights) -> Result<Weights, DiceError> {
        let denom = &self.denom * &other.denom;
        if self.w.is_empty() || other.w.is_empty() {
            return Ok(Weights {
                lo: 0,
                w: Vec::new(),
                truncated: denom.clone(),
                denom,
            });
        }
        let width = (self.w.len() + other.w.len() - 1) as u64;
        if width > MAX_OUTCOMES {
            return Err(too_large(width));
        }
        let lo = self.lo.checked_add(other.lo).ok_or(DiceError::Overflow)?;
        self.hi()
            .checked_add(other.hi())
            .ok_or(DiceError::Overflow)?;
        let mut w = vec![BigInt::zero(); width as usize];
        for (i, a) in self.w.iter().enumerate().filter(|(_, a)| !a.is_zero()) {
            for (j, b) in other.w.iter().enumerate().filter(|(_, b)| !b.is_zero()) {
                w[i + j] += a * b;
            }
        }
        let kept: BigInt = w.iter().sum();
        Ok(Weights {
            lo,
            w,
            truncated: &denom - kept,
            denom,
        })
    }

    /// The sum of `n` independent copies, by repeated squaring.
    fn power(&self, mut n: u32) -> Result<Weights, DiceError> {
        let mut result = Weights::point(0);
        let mut base = self.clone();
        while n > 0 {
            if n & 1 == 1 {
                result = result.convolve(&base)?;
            }
            n >>= 1;
            if n > 0 {
                base = base.convolve(&base)?;
            }
        }
        Ok(result)
    }

    fn into_distribution(self) -> Distribution {
        let outcomes = self
            .pairs()
            .map(|(k, w)| (k, BigRational::new(w.clone(), self.denom.clone())))
            .collect();
        Distribution {
            outcomes,
            truncated: BigRational::new(self.truncated, self.denom),
        }
    }
}

/// The exact distribution of a dice value's total, as the roller with these limits would give it.
pub fn distribution(value: &DiceValue, limits: &DiceLimits) -> Result<Distribution, DiceError> {
    let mut total = Weights::point(value.flat);
    for term in &value.terms {
        total = total.convolve(&term_weights(term, limits)?)?;
    }
    Ok(total.into_distribution())
}

fn term_weights(term: &DiceTerm, limits: &DiceLimits) -> Result<Weights, DiceError> {
    if term.count > limits.max_dice_per_item {
        return Err(DiceError::SafetyLimitExceeded {
            limit: "maxDicePerItem",
            max: limits.max_dice_per_item,
        });
    }
    let rules = TermRules::new(term);
    let n = term.count as usize;
    if u64::from(term.die.face_count()) > MAX_OUTCOMES {
        return Err(too_large(u64::from(term.die.face_count())));
    }
    let (lo, hi) = rules.kept_ranks(n);
    let separate = rules.separate_explosions();
    let partial_reroll = rules
        .reroll
        .and_then(|r| r.count)
        .is_some_and(|c| c > 0 && (c as usize) < n);
    // With `!` the units outnumber the dice, so a keep that keeps all `n` may still drop some.
    if partial_reroll || (separate && !rules.keep_drop.is_empty()) {
        // The dice are no longer independent units (a reroll `count` picks among them), or the
        // number of units keep and drop rank is itself random (`!`).
        let sum = pool::term_weights(&rules, n, limits)?;
        return if term.negative {
            sum.map(|v| v.checked_neg().ok_or(DiceError::Overflow))
        } else {
            Ok(sum)
        };
    }
    let unit = unit_weights(&rules, rerolled_face(&rules, n, limits)?, limits)?;
    // With `!` and counting, a unit's value is already its chain's count.
    let contribution = |v: i64| {
        if rules.counts() && !separate {
            rules.score(v)
        } else {
            v
        }
    };
    let width = (n as u64).saturating_mul(unit.w.len().saturating_sub(1) as u64) + 1;
    if width > MAX_OUTCOMES {
        return Err(too_large(width));
    }
    let sum = if (lo, hi) == (0, n) {
        unit.map(|v| Ok(contribution(v)))?.power(term.count)?
    } else {
        order_statistic(&unit, n, lo, hi, contribution)?
    };
    if term.negative {
        sum.map(|v| v.checked_neg().ok_or(DiceError::Overflow))
    } else {
        Ok(sum)
    }
}

/// One die's face after its reroll rule, over the die's raw faces.
fn rerolled_face(rules: &TermRules, n: usize, limits: &DiceLimits) -> Result<Weights, DiceError> {
    let (low, high) = rules.die.face_range();
    let s = BigInt::from(rules.die.face_count());
    let uniform = || {
        Weights::from_pairs(
            (low..=high).map(|f| (f, BigInt::one())),
            s.clone(),
            BigInt::zero(),
        )
    };
    let Some(reroll) = rules.reroll else {
        return uniform();
    };
    match reroll.count {
        Some(0) => return uniform(),
        // The dice are not independent: `pool.rs` handles this, and must have been asked instead.
        Some(c) if (c as usize) < n => {
            return Err(DiceError::DistributionUnsupported {
                reason: "a reroll count below the number of dice",
            });
        }
        _ => {}
    }
    let m = BigInt::from((low..=high).filter(|&f| reroll.at.matches(f)).count());
    if reroll.once {
        // A matching face is rolled again once, and the new face stands.
        let pairs = (low..=high).map(|g| {
            (
                g,
                if reroll.at.matches(g) {
                    m.clone()
                } else {
                    &s + &m
                },
            )
        });
        return Weights::from_pairs(pairs, &s * &s, BigInt::zero());
    }
    let l = limits.max_rerolls;
    if l > MAX_CHAIN {
        return Err(DiceError::DistributionUnsupported {
            reason: "maxRerolls above 1000",
        });
    }
    // A face g that doesn't match ends after k rerolls (0..=L) with weight m^k S^(L-k) over S^(L+1);
    // L rerolls all matching again is the limit.
    let per_face: BigInt = (0..=l)
        .map(|k| {
            num_traits::pow(m.clone(), k as usize) * num_traits::pow(s.clone(), (l - k) as usize)
        })
        .sum();
    let pairs = (low..=high)
        .filter(|&g| !reroll.at.matches(g))
        .map(|g| (g, per_face.clone()));
    Weights::from_pairs(
        pairs,
        num_traits::pow(s.clone(), l as usize + 1),
        num_traits::pow(m, l as usize + 1),
    )
}

/// One unit's value: a die's face (`first`, after its reroll) with its explosion chain, each face clamped; with
/// `!` and counting, each face counted. Its sort key for keep and drop is this value.
fn unit_weights(
    rules: &TermRules,
    first: Weights,
    limits: &DiceLimits,
) -> Result<Weights, DiceError> {
    let counted_faces = rules.counts() && rules.separate_explosions();
    let h = |face: i64| {
        if counted_faces {
            rules.score(rules.clamp(face))
        } else {
            rules.clamp(face)
        }
    };
    let Some(explode) = rules.explode else {
        return first.map(|f| Ok(h(f)));
    };
    let l = limits.max_explosions;
    if l > MAX_CHAIN {
        return Err(DiceError::DistributionUnsupported {
            reason: "maxExplosions above 1000",
        });
    }
    let (low, high) = rules.die.face_range();
    let s = BigInt::from(rules.die.face_count());
    // `tail`: what the faces after an explosion add, with `k` more explosions allowed; with none
    // left, an explosion face that matches again is cut off.
    let mut tail = Weights {
        lo: 0,
        w: Vec::new(),
        denom: BigInt::one(),
        truncated: BigInt::one(),
    };
    for _ in 0..l {
        tail = extend_chain(
            &tail,
            (low..=high).map(|g| (g, BigInt::one())),
            &s,
            &explode.at,
            &h,
        )?;
    }
    extend_chain(
        &tail,
        first.pairs().map(|(k, w)| (k, w.clone())),
        &first.denom,
        &explode.at,
        &h,
    )
    .map(|mut w| {
        w.truncated += &first.truncated * &tail.denom;
        w
    })
}

/// A face from `faces` (weights over `denom`), then, if it matches `at`, what `tail` adds.
fn extend_chain(
    tail: &Weights,
    faces: impl Iterator<Item = (i64, BigInt)>,
    denom: &BigInt,
    at: &ocf_syntax::dice::Compare,
    h: &impl Fn(i64) -> i64,
) -> Result<Weights, DiceError> {
    let mut pairs = Vec::new();
    let mut truncated = BigInt::zero();
    for (g, w) in faces {
        if at.matches(g) {
            truncated += &w * &tail.truncated;
            for (k, tw) in tail.pairs() {
                pairs.push((h(g).checked_add(k).ok_or(DiceError::Overflow)?, &w * tw));
            }
        } else {
            pairs.push((h(g), w * &tail.denom));
        }
    }
    Weights::from_pairs(pairs, denom * &tail.denom, truncated)
}

/// The sum of `contribution` over the dice ranked `lo..hi` (lowest first) among `n` independent
/// units. Values are taken from lowest to highest; choosing how many of the remaining dice show
/// each value tells which ranks they fill, so the state is (dice placed, kept sum).
fn order_statistic(
    unit: &Weights,
    n: usize,
    lo: usize,
    hi: usize,
    contribution: impl Fn(i64) -> i64,
) -> Result<Weights, DiceError> {
    let values: Vec<(i64, &BigInt)> = unit.pairs().collect();
    let spread = values
        .iter()
        .map(|&(v, _)| contribution(v))
        .fold((0i64, 0i64), |(a, b), c| (a.min(c), b.max(c)));
    let width = (hi - lo) as u64 * (spread.1 - spread.0).unsigned_abs() + 1;
    let work = width
        .saturating_mul(values.len() as u64)
        .saturating_mul((n * n) as u64);
    if width > MAX_OUTCOMES || work > 200 * MAX_OUTCOMES * MAX_OUTCOMES {
        return Err(too_large(width));
    }
    // state[i]: kept sum -> weight, with i dice placed.
    let mut state: Vec<BTreeMap<i64, BigInt>> = vec![BTreeMap::new(); n + 1];
    state[0].insert(0, BigInt::one());
    for &(v, w) in &values {
        let c_v = contribution(v);
        let powers: Vec<BigInt> = std::iter::successors(Some(BigInt::one()), |p| Some(p * w))
            .take(n + 1)
            .collect();
        let mut next: Vec<BTreeMap<i64, BigInt>> = vec![BTreeMap::new(); n + 1];
        for (i, sums) in state.iter().enumerate() {
            let mut binom = BigInt::one(); // C(n - i, c)
            for c in 0..=(n - i) {
                if c > 0 {
                    binom = binom * (n - i - c + 1) / c;
                }
                let kept = (i + c).min(hi).saturating_sub(i.max(lo));
                let add = (kept as i64).checked_mul(c_v).ok_or(DiceError::Overflow)?;
                let factor = &binom * &powers[c];
                for (&sum, weight) in sums {
                    let key = sum.checked_add(add).ok_or(DiceError::Overflow)?;
                    *next[i + c].entry(key).or_default() += weight * &factor;
                }
            }
        }
        state = next;
    }
    let denom = num_traits::pow(unit.denom.clone(), n);
    let pairs = std::mem::take(&mut state[n]);
    let kept: BigInt = pairs.values().sum();
    Weights::from_pairs(pairs, denom.clone(), denom - kept)
}
