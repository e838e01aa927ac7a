//! Products and powers of weight lists, read as polynomials with big nonnegative integer
//! coefficients (`w[i]` the coefficient of `x^i`), the distribution of a sum being the product of
//! its parts'. Three methods, each picked where it is cheapest, by its estimated work:
//!
//! - **Long multiplication**, pair by pair: cheapest for short lists.
//! - **Kronecker substitution**: each list packed into one big integer, a coefficient to a slot
//!   wide enough for any coefficient of the product (nonnegative coefficients never borrow), so one
//!   product of big integers (num-bigint's Karatsuba and Toom-3) multiplies whole polynomials;
//!   powers by repeated squaring. Cheapest for wide lists (a die that explodes, `10d10!!`).
//! - **Miller's recurrence** for a power `Q = P^n`: from `P·Q' = n·P'·Q`, each coefficient of `Q`
//!   follows from the ones before it with one term per coefficient of `P`, and an exact division.
//!   Multiplying both sides by `(1 - x)^2` first turns the terms of a run of equal weights (a plain
//!   die: `1 + x + … + x^(s-1)`) into a handful, so `1000d20` costs seven terms per outcome.
//!
//! All three are exact; tests compare them on small lists.

use num_bigint::{BigInt, BigUint};
use num_traits::{One, Zero};

use super::work::{MAX_WORDS, STEP, Work, mul_cost, words_of_bits};
use crate::error::{DiceError, DistributionLimit};

/// What the cost estimates need to know of a list.
#[derive(Debug, Clone, Copy)]
struct Shape {
    len: u64,
    nonzero: u64,
    /// Bits of the sum of the coefficients, which bounds each of them (and each of a product's).
    sum_bits: u64,
}

impl Shape {
    fn of(c: &[BigInt]) -> Shape {
        let sum: BigInt = c.iter().sum();
        Shape {
            len: c.len() as u64,
            nonzero: c.iter().filter(|x| !x.is_zero()).count() as u64,
            sum_bits: sum.bits(),
        }
    }

    fn words(&self) -> u64 {
        words_of_bits(self.sum_bits)
    }

    fn times(&self, other: &Shape) -> Shape {
        let len = self.len + other.len - 1;
        Shape {
            len,
            nonzero: len,
            sum_bits: self.sum_bits + other.sum_bits,
        }
    }

    /// The words a list of this shape holds at most.
    fn size(&self) -> u64 {
        self.len.saturating_mul(self.words())
    }
}

fn check_size(shape: &Shape) -> Result<(), DiceError> {
    if shape.size() > MAX_WORDS {
        return Err(DiceError::DistributionTooLarge {
            limit: DistributionLimit::Memory,
        });
    }
    Ok(())
}

fn long_cost(a: &Shape, b: &Shape) -> u64 {
    a.nonzero
        .saturating_mul(b.nonzero)
        .saturating_mul(STEP + mul_cost(a.words(), b.words()))
}

/// The 32-bit digits of one slot of a product of lists of these shapes.
fn slot_digits(a: &Shape, b: &Shape) -> u64 {
    (a.sum_bits + b.sum_bits).div_ceil(32).max(1)
}

fn kronecker_cost(a: &Shape, b: &Shape) -> u64 {
    let slot = slot_digits(a, b);
    let (wa, wb) = (a.len * slot / 2 + 1, b.len * slot / 2 + 1);
    // Packing and unpacking touch every word twice; each coefficient is one allocation.
    mul_cost(wa, wb)
        .saturating_add(4 * (wa + wb))
        .saturating_add((a.len + b.len) * STEP * 2)
}

/// The work [`power`] would estimate for `p^n`.
pub(super) fn power_cost(p: &[BigInt], n: u32) -> u64 {
    if n <= 1 || p.len() <= 1 {
        return p.len() as u64 * STEP;
    }
    let shape = Shape::of(p);
    let result = Shape {
        len: (shape.len - 1) * u64::from(n) + 1,
        nonzero: 0,
        sum_bits: shape.sum_bits * u64::from(n),
    };
    let recurrence = [false, true]
        .map(|sparse| Recurrence::new(p, n, sparse).cost(&result))
        .into_iter()
        .min()
        .expect("two");
    recurrence.min(squaring_cost(&shape, n))
}

/// The product of `a` and `b` (both nonempty, nonnegative), by the cheaper method.
pub(super) fn product(
    a: &[BigInt],
    b: &[BigInt],
    work: &mut Work,
) -> Result<Vec<BigInt>, DiceError> {
    let (sa, sb) = (Shape::of(a), Shape::of(b));
    check_size(&sa.times(&sb))?;
    let (long, kron) = (long_cost(&sa, &sb), kronecker_cost(&sa, &sb));
    if long <= kron {
        work.spend(long)?;
        Ok(long_product(a, b))
    } else {
        work.spend(kron)?;
        Ok(kronecker_product(a, b, slot_digits(&sa, &sb) as usize))
    }
}

/// Pair by pair.
pub(super) fn long_product(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
    let mut w = vec![BigInt::zero(); a.len() + b.len() - 1];
    for (i, x) in a.iter().enumerate().filter(|(_, x)| !x.is_zero()) {
        for (j, y) in b.iter().enumerate().filter(|(_, y)| !y.is_zero()) {
            w[i + j] += x * y;
        }
    }
    w
}

/// One product of two big integers, each list packed `slot` 32-bit digits to a coefficient.
pub(super) fn kronecker_product(a: &[BigInt], b: &[BigInt], slot: usize) -> Vec<BigInt> {
    let len = a.len() + b.len() - 1;
    let packed_a = pack(a, slot);
    let product = if std::ptr::eq(a, b) {
        &packed_a * &packed_a
    } else {
        &packed_a * &pack(b, slot)
    };
    unpack(&product, slot, len)
}

fn pack(c: &[BigInt], slot: usize) -> BigUint {
    let mut digits = vec![0u32; c.len() * slot];
    for (i, x) in c.iter().enumerate() {
        let (_, d) = x.to_u32_digits();
        debug_assert!(d.len() <= slot, "a coefficient wider than its slot");
        digits[i * slot..i * slot + d.len()].copy_from_slice(&d);
    }
    BigUint::new(digits)
}

fn unpack(x: &BigUint, slot: usize, len: usize) -> Vec<BigInt> {
    let digits = x.to_u32_digits();
    (0..len)
        .map(|i| {
            let start = (i * slot).min(digits.len());
            let end = ((i + 1) * slot).min(digits.len());
            BigInt::from(BigUint::from_slice(&digits[start..end]))
        })
        .collect()
}

/// `p^n` (`p` nonempty, nonnegative, `p[0]` not zero, `n >= 1`), by the cheapest method.
pub(super) fn power(p: &[BigInt], n: u32, work: &mut Work) -> Result<Vec<BigInt>, DiceError> {
    let shape = Shape::of(p);
    let result = Shape {
        len: (shape.len - 1) * u64::from(n) + 1,
        nonzero: 0,
        sum_bits: shape.sum_bits * u64::from(n),
    };
    check_size(&result)?;
    if n == 1 {
        return Ok(p.to_vec());
    }
    if p.len() == 1 {
        work.spend(result.size())?;
        return Ok(vec![num_traits::pow(p[0].clone(), n as usize)]);
    }
    let squaring = squaring_cost(&shape, n);
    let (plain, sparse) = (Recurrence::new(p, n, false), Recurrence::new(p, n, true));
    let recurrence = if sparse.terms() < plain.terms() {
        sparse
    } else {
        plain
    };
    let by_recurrence = recurrence.cost(&result);
    if by_recurrence <= squaring {
        work.spend(by_recurrence)?;
        Ok(recurrence.run(p, result.len as usize))
    } else {
        work.spend(squaring)?;
        Ok(power_by_squaring(p, n))
    }
}

/// The work of [`power_by_squaring`], each product by its cheaper method.
fn squaring_cost(p: &Shape, n: u32) -> u64 {
    let mut acc = *p;
    let mut cost = 0u64;
    for bit in (0..31 - n.leading_zeros()).rev() {
        cost = cost.saturating_add(long_cost(&acc, &acc).min(kronecker_cost(&acc, &acc)));
        acc = acc.times(&acc);
        if n >> bit & 1 == 1 {
            cost = cost.saturating_add(long_cost(&acc, p).min(kronecker_cost(&acc, p)));
            acc = acc.times(p);
        }
    }
    cost
}

/// `p^n` from the highest bit of `n` down: square, and multiply by `p` at each set bit (so one
/// factor of every such product stays as short as `p`).
pub(super) fn power_by_squaring(p: &[BigInt], n: u32) -> Vec<BigInt> {
    let shape = Shape::of(p);
    let mut acc = p.to_vec();
    let mut acc_shape = shape;
    for bit in (0..31 - n.leading_zeros()).rev() {
        acc = cheaper_product(&acc, &acc, &acc_shape, &acc_shape);
        acc_shape = acc_shape.times(&acc_shape);
        if n >> bit & 1 == 1 {
            acc = cheaper_product(&acc, p, &acc_shape, &shape);
            acc_shape = acc_shape.times(&shape);
        }
    }
    acc
}

fn cheaper_product(a: &[BigInt], b: &[BigInt], sa: &Shape, sb: &Shape) -> Vec<BigInt> {
    if long_cost(sa, sb) <= kronecker_cost(sa, sb) {
        long_product(a, b)
    } else {
        kronecker_product(a, b, slot_digits(sa, sb) as usize)
    }
}

/// Miller's recurrence for `Q = P^n`: `P·Q' = n·P'·Q`, both sides times `M` (1, or `(1 - x)^2`
/// when that leaves fewer terms). With `L = M·P` and `R = n·M·P'`, the coefficient of `x^(k-1)`
/// gives `l0·k·q_k = Σ_j r_j·q_(k-1-j) - Σ_(j>=1) l_j·(k-j)·q_(k-j)`, and `l0 = p0`.
#[derive(Debug)]
pub(super) struct Recurrence {
    l: Vec<(usize, BigInt)>,
    r: Vec<(usize, BigInt)>,
    n: u32,
}

impl Recurrence {
    pub fn new(p: &[BigInt], n: u32, sparse: bool) -> Recurrence {
        let derivative: Vec<BigInt> = p
            .iter()
            .enumerate()
            .skip(1)
            .map(|(j, c)| c * j * n)
            .collect();
        let times_m = |c: Vec<BigInt>| -> Vec<BigInt> {
            if !sparse {
                return c;
            }
            let m = [BigInt::one(), BigInt::from(-2), BigInt::one()];
            let mut out = vec![BigInt::zero(); c.len() + 2];
            for (i, x) in c.iter().enumerate().filter(|(_, x)| !x.is_zero()) {
                for (j, y) in m.iter().enumerate() {
                    out[i + j] += x * y;
                }
            }
            out
        };
        let nonzero = |c: Vec<BigInt>| -> Vec<(usize, BigInt)> {
            c.into_iter()
                .enumerate()
                .filter(|(_, x)| !x.is_zero())
                .collect()
        };
        Recurrence {
            l: nonzero(times_m(p.to_vec())),
            r: nonzero(times_m(derivative)),
            n,
        }
    }

    /// The terms of one coefficient.
    fn terms(&self) -> u64 {
        (self.l.len() + self.r.len()) as u64
    }

    fn cost(&self, result: &Shape) -> u64 {
        let coefficient = self
            .l
            .iter()
            .chain(&self.r)
            .map(|(_, c)| c.bits())
            .max()
            .unwrap_or(0)
            + 64;
        // Each term is two products, each a new integer: measured at about three times the
        // arithmetic alone (`docs/perf.md`).
        let per_term = 3 * (2 * STEP + mul_cost(result.words(), words_of_bits(coefficient)));
        result.len.saturating_mul(
            self.terms()
                .saturating_mul(per_term)
                .saturating_add(mul_cost(result.words(), words_of_bits(coefficient))),
        )
    }

    /// The first `len` coefficients of `P^n`.
    pub fn run(&self, p: &[BigInt], len: usize) -> Vec<BigInt> {
        let l0 = &self.l[0].1;
        debug_assert_eq!(self.l[0].0, 0);
        let mut q: Vec<BigInt> = Vec::with_capacity(len);
        q.push(num_traits::pow(p[0].clone(), self.n as usize));
        for k in 1..len {
            let mut acc = BigInt::zero();
            for (j, r) in self.r.iter().take_while(|(j, _)| *j < k) {
                acc += r * &q[k - 1 - j];
            }
            for (j, l) in self.l[1..].iter().take_while(|(j, _)| *j <= k) {
                acc -= (l * (k - j)) * &q[k - j];
            }
            let divisor = l0 * k;
            debug_assert!((&acc % &divisor).is_zero(), "Miller's division is exact");
            q.push(acc / divisor);
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn big(c: &[u64]) -> Vec<BigInt> {
        c.iter().map(|&x| BigInt::from(x)).collect()
    }

    fn naive_power(p: &[BigInt], n: u32) -> Vec<BigInt> {
        (1..n).fold(p.to_vec(), |acc, _| long_product(&acc, p))
    }

    #[test]
    fn a_plain_die_needs_few_terms() {
        let d20 = big(&[1; 20]);
        assert_eq!(Recurrence::new(&d20, 1000, false).terms(), 39);
        assert_eq!(Recurrence::new(&d20, 1000, true).terms(), 7);
    }

    #[test]
    fn powers_of_a_big_die_agree() {
        let p = big(&[3, 0, 5, 1 << 40, 7]);
        let expected = naive_power(&p, 9);
        for sparse in [false, true] {
            let r = Recurrence::new(&p, 9, sparse);
            assert_eq!(r.run(&p, expected.len()), expected);
        }
        assert_eq!(power_by_squaring(&p, 9), expected);
    }

    proptest! {
        /// The fast methods give what long multiplication gives.
        #[test]
        fn methods_agree(
            p in proptest::collection::vec(0u64..1_000_000_000_000, 1..8),
            q in proptest::collection::vec(0u64..1_000, 1..8),
            n in 1u32..12,
        ) {
            let (mut p, q) = (big(&p), big(&q));
            if p[0].is_zero() {
                p[0] = BigInt::one();
            }
            let (sp, sq) = (Shape::of(&p), Shape::of(&q));
            if !q.iter().all(Zero::is_zero) {
                prop_assert_eq!(
                    kronecker_product(&p, &q, slot_digits(&sp, &sq) as usize),
                    long_product(&p, &q)
                );
            }
            let expected = naive_power(&p, n);
            prop_assert_eq!(&power_by_squaring(&p, n), &expected);
            for sparse in [false, true] {
                prop_assert_eq!(&Recurrence::new(&p, n, sparse).run(&p, expected.len()), &expected);
            }
            let mut work = Work::new(u64::MAX);
            prop_assert_eq!(&power(&p, n, &mut work).unwrap(), &expected);
            prop_assert_eq!(&product(&p, &p, &mut work).unwrap(), &long_product(&p, &p));
        }
    }
}
