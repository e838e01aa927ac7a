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
//! the inner loops multiply and add integers and never reduce fractions; only the final
//! probabilities are reduced, dividing out the primes of the dice's face counts (the only primes a
//! denominator can have) rather than by a gcd each. A distribution may be *short*: the weight of
//! the rolls the roller would stop with `safety-limit-exceeded` (too many explosions or rerolls)
//! is kept apart as `truncated`.
//!
//! Sums of many dice are powers of the unit's polynomial (`poly.rs`: Miller's recurrence, or
//! repeated squaring by Kronecker substitution); keep and drop are order statistics (`order.rs`).
//! Every step estimates its work first and spends it from one bound for the whole value
//! (`work.rs`), so a distribution is answered or refused in about a second, on every machine alike.

use std::collections::BTreeMap;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

use crate::error::{DiceError, DistributionLimit};
use crate::limits::DiceLimits;
use crate::rules::TermRules;
use crate::value::{DiceTerm, DiceValue};

mod order;
mod poly;
mod pool;
mod sketch;
mod small;
mod work;

use work::Work;
pub use work::{MAX_WORDS, MAX_WORK};

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
    /// The safety limits (`maxExplosions`, `maxRerolls`) whose cut-off rolls make up
    /// `truncated`, in that order; empty when nothing is cut off.
    pub cut_by: Vec<&'static str>,
    /// The word operations working it out took, of [`MAX_WORK`] (`work.rs`).
    pub work: u64,
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
        limit: DistributionLimit::Outcomes {
            outcomes,
            max: MAX_OUTCOMES,
        },
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
    fn convolve(&self, other: &Weights, work: &mut Work) -> Result<Weights, DiceError> {
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
        let w = poly::product(&self.w, &other.w, work)?;
        let kept: BigInt = w.iter().sum();
        Ok(Weights {
            lo,
            w,
            truncated: &denom - kept,
            denom,
        })
    }

    /// The sum of `n` independent copies.
    fn power(&self, n: u32, work: &mut Work) -> Result<Weights, DiceError> {
        if n == 0 {
            return Ok(Weights::point(0));
        }
        let denom = num_traits::pow(self.denom.clone(), n as usize);
        if self.w.is_empty() {
            return Ok(Weights {
                lo: 0,
                w: Vec::new(),
                truncated: denom.clone(),
                denom,
            });
        }
        let width = (n as u64).saturating_mul(self.w.len() as u64 - 1) + 1;
        if width > MAX_OUTCOMES {
            return Err(too_large(width));
        }
        let lo = self
            .lo
            .checked_mul(i64::from(n))
            .ok_or(DiceError::Overflow)?;
        self.hi()
            .checked_mul(i64::from(n))
            .ok_or(DiceError::Overflow)?;
        let w = poly::power(&self.w, n, work)?;
        let kept: BigInt = w.iter().sum();
        Ok(Weights {
            lo,
            w,
            truncated: &denom - kept,
            denom,
        })
    }

    /// The probabilities, reduced by `primes`: every prime the denominator may have.
    fn into_distribution(
        self,
        primes: &[u64],
        cut_by: Vec<&'static str>,
        work: u64,
    ) -> Distribution {
        let reducer = Reducer::new(&self.denom, primes);
        let outcomes = self.pairs().map(|(k, w)| (k, reducer.reduce(w))).collect();
        Distribution {
            outcomes,
            truncated: reducer.reduce(&self.truncated),
            cut_by: if self.truncated.is_zero() {
                Vec::new()
            } else {
                cut_by
            },
            work,
        }
    }
}

/// The exact distribution of a dice value's total, as the roller with these limits would give it.
pub fn distribution(value: &DiceValue, limits: &DiceLimits) -> Result<Distribution, DiceError> {
    distribution_within(value, limits, MAX_WORK)
}

/// [`distribution`] with at most `work` word operations to spend.
pub fn distribution_within(
    value: &DiceValue,
    limits: &DiceLimits,
    work: u64,
) -> Result<Distribution, DiceError> {
    if let Some(d) = small::distribution(value, limits).filter(|d| d.work <= work) {
        return Ok(d);
    }
    general(value, limits, work)
}

/// The general method, in big integers.
fn general(value: &DiceValue, limits: &DiceLimits, work: u64) -> Result<Distribution, DiceError> {
    let budget = work;
    let mut work = Work::new(work);
    let mut total = Weights::point(value.flat);
    let mut cut_by = Vec::new();
    for term in &value.terms {
        let weights = term_weights(term, limits, &mut work)?;
        if !weights.truncated.is_zero() {
            let rules = TermRules::new(term);
            if rules.explode.is_some() {
                cut_by.push("maxExplosions");
            }
            if rules.reroll.is_some_and(|r| !r.once) {
                cut_by.push("maxRerolls");
            }
        }
        total = total.convolve(&weights, &mut work)?;
    }
    cut_by.sort_by_key(|l| *l != "maxExplosions");
    cut_by.dedup();
    let mut primes: Vec<u64> = value
        .terms
        .iter()
        .flat_map(|t| prime_factors(u64::from(t.die.face_count())))
        .collect();
    primes.sort_unstable();
    primes.dedup();
    let reduce_cost = (total.w.len() as u64)
        .saturating_mul(work::STEP * 4 + 4 * work::words_of_bits(total.denom.bits()));
    work.spend(reduce_cost)?;
    Ok(total.into_distribution(&primes, cut_by, budget - work.left()))
}

/// The distinct primes of `n`, by trial division (`n` is a face count, at most `u32::MAX`).
fn prime_factors(mut n: u64) -> Vec<u64> {
    let mut primes = Vec::new();
    let mut p = 2;
    while p * p <= n {
        if n.is_multiple_of(p) {
            primes.push(p);
            while n.is_multiple_of(p) {
                n /= p;
            }
        }
        p += 1;
    }
    if n > 1 {
        primes.push(n);
    }
    primes
}

/// Reduces weights over one denominator to lowest terms. The denominator is a product of face
/// counts, so dividing out the common powers of their primes reduces a fraction fully, for far
/// less than a gcd of two numbers of thousands of bits each (`1000d20`). A power is found by
/// dividing by `p^(2^j)` from the largest `j` down, so that a weight with a thousand factors 10
/// (`10d10!!`) takes a dozen divisions, not a thousand.
struct Reducer<'a> {
    denom: &'a BigInt,
    /// Each prime's powers `p^(2^j)` that divide the denominator, with the prime's exponent in
    /// it; `None` when the denominator has another factor, which a gcd then finds.
    primes: Option<Vec<(Vec<BigInt>, u64)>>,
}

impl<'a> Reducer<'a> {
    fn new(denom: &'a BigInt, primes: &[u64]) -> Reducer<'a> {
        let mut rest = denom.clone();
        let mut found = Vec::new();
        for &p in primes {
            let (e, ladder) = valuation(&mut rest, &BigInt::from(p), u64::MAX);
            if e > 0 {
                found.push((ladder, e));
            }
        }
        Reducer {
            denom,
            primes: rest.is_one().then_some(found),
        }
    }

    fn reduce(&self, w: &BigInt) -> BigRational {
        let Some(primes) = &self.primes else {
            return BigRational::new(w.clone(), self.denom.clone());
        };
        if w.is_zero() {
            return BigRational::zero();
        }
        let mut numer = w.clone();
        let mut common = BigInt::one();
        for (ladder, e) in primes {
            if ladder[0] == BigInt::from(2) {
                let v = numer.trailing_zeros().unwrap_or(0).min(*e);
                numer >>= v;
                common <<= v;
                continue;
            }
            // Up the ladder while the powers divide (most weights have few factors), then down.
            let mut top = 0;
            while top < ladder.len() && 1u64 << top <= *e && (&numer % &ladder[top]).is_zero() {
                top += 1;
            }
            let mut left = *e;
            for (j, pj) in ladder[..top].iter().enumerate().rev() {
                let step = 1u64 << j;
                while left >= step && (&numer % pj).is_zero() {
                    numer /= pj;
                    common *= pj;
                    left -= step;
                }
            }
        }
        BigRational::new_raw(numer, self.denom / common)
    }
}

/// Divides the power of `p` (at most `max` of it) out of `x`, returning its exponent and the
/// powers `p^(2^j)` it tried, from `p` up.
fn valuation(x: &mut BigInt, p: &BigInt, max: u64) -> (u64, Vec<BigInt>) {
    let mut ladder = vec![p.clone()];
    while ladder.last().expect("nonempty").bits() * 2 <= x.bits() + 1 {
        let next = ladder.last().expect("nonempty").pow(2u32);
        ladder.push(next);
    }
    let mut e = 0u64;
    for (j, pj) in ladder.iter().enumerate().rev() {
        let step = 1u64 << j;
        while e + step <= max && (&*x % pj).is_zero() {
            *x /= pj;
            e += step;
        }
    }
    (e, ladder)
}

fn term_weights(
    term: &DiceTerm,
    limits: &DiceLimits,
    work: &mut Work,
) -> Result<Weights, DiceError> {
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
        let sum = pool::term_weights(&rules, n, limits, work)?;
        return if term.negative {
            sum.map(|v| v.checked_neg().ok_or(DiceError::Overflow))
        } else {
            Ok(sum)
        };
    }
    let unit = unit_weights(&rules, rerolled_face(&rules, n, limits)?, limits, work)?;
    // With `!` and counting, a unit's value is already its chain's count.
    let contribution = |v: i64| {
        if rules.counts() && !separate {
            rules.score(v)
        } else {
            v
        }
    };
    let sum = if (lo, hi) == (0, n) {
        // Counting maps the unit to its scores first, so `1000d1000cs>500` spans 1001 outcomes.
        unit.map(|v| Ok(contribution(v)))?.power(term.count, work)?
    } else {
        order::order_statistic(&unit, n, lo, hi, contribution, work)?
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
    work: &mut Work,
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
            work,
        )?;
    }
    extend_chain(
        &tail,
        first.pairs().map(|(k, w)| (k, w.clone())),
        &first.denom,
        &explode.at,
        &h,
        work,
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
    work: &mut Work,
) -> Result<Weights, DiceError> {
    let mut pairs = Vec::new();
    let mut truncated = BigInt::zero();
    let tail_words = work::words_of_bits(tail.denom.bits());
    for (g, w) in faces {
        if at.matches(g) {
            // Each pair is a product and a map entry (about four steps, measured); a wide tail
            // times many exploding faces (`1d100!>1`) is where this grows.
            work.steps(4 * (tail.w.len() as u64 + 1), tail_words * 2)?;
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
