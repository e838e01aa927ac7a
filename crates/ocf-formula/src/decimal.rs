//! Six-place decimals (catalogue §1.11): an exact count of millionths, so that `0.1 + 0.2` is `0.3`
//! and `50 * 0.14` is `7`, as the effects chapter requires.
//!
//! Every step that could produce a seventh place (a product, a quotient, a literal written with more
//! places) rounds to six places, half away from zero; see decisions.md, "six places".

use std::fmt;

/// How many millionths make one.
const SCALE: i64 = 1_000_000;
const WIDE_SCALE: i128 = SCALE as i128;
const PLACES: usize = 6;

/// An exact decimal with six places. Ordered and hashed by value.
///
/// The range is symmetric, ±9 223 372 036 854.775807 (`i64::MAX` millionths): `i64::MIN`
/// millionths is refused like any other result out of range, so that negation and `abs` of a
/// decimal never fail and the range is the one formulas.md gives (decisions.md).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Decimal(i64);

/// Why decimal arithmetic failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithError {
    /// The result does not fit (±9 223 372 036 854.775807).
    Overflow,
    DivisionByZero,
}

/// Why a decimal literal could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseDecimalError {
    Invalid,
    Overflow,
}

/// `n / d` rounded to the nearest integer, half away from zero. `d` must not be zero.
fn div_round(n: i128, d: i128) -> i128 {
    let q = n / d;
    let r = n % d;
    if 2 * r.abs() >= d.abs() {
        if (n < 0) == (d < 0) { q + 1 } else { q - 1 }
    } else {
        q
    }
}

/// A number as an exact count of millionths, wide enough for any int (`i64::MAX` is about
/// 9.2 × 10²⁴ millionths) and for what two ints or decimals make together.
///
/// Mixed and decimal arithmetic is done here and only the result is checked against the decimal
/// range: an int outside that range may still take part (`10000000000000 / 10` is
/// `1000000000000.0`), as "a result out of the range of its type" (formulas.md) asks. The
/// operations are exact for operands that are ints or decimals, and for sums of many of them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Millionths(i128);

impl Millionths {
    pub const ZERO: Millionths = Millionths(0);

    pub fn of_int(n: i64) -> Millionths {
        Millionths(i128::from(n) * WIDE_SCALE)
    }

    pub fn of_decimal(d: Decimal) -> Millionths {
        Millionths(i128::from(d.0))
    }

    /// The count of millionths.
    pub fn get(self) -> i128 {
        self.0
    }

    /// The value as a decimal, if it is within the decimal range.
    pub fn to_decimal(self) -> Result<Decimal, ArithError> {
        if self.0.unsigned_abs() <= i64::MAX as u128 {
            Ok(Decimal(self.0 as i64))
        } else {
            Err(ArithError::Overflow)
        }
    }

    pub fn checked_add(self, other: Millionths) -> Result<Millionths, ArithError> {
        self.0
            .checked_add(other.0)
            .map(Millionths)
            .ok_or(ArithError::Overflow)
    }

    pub fn checked_sub(self, other: Millionths) -> Result<Millionths, ArithError> {
        self.0
            .checked_sub(other.0)
            .map(Millionths)
            .ok_or(ArithError::Overflow)
    }

    /// The product rounded to six places. An `i128` overflow means a product past 10³² in value,
    /// far out of any range.
    pub fn checked_mul(self, other: Millionths) -> Result<Millionths, ArithError> {
        let product = self.0.checked_mul(other.0).ok_or(ArithError::Overflow)?;
        Ok(Millionths(div_round(product, WIDE_SCALE)))
    }

    /// The quotient rounded to six places.
    pub fn checked_div(self, other: Millionths) -> Result<Millionths, ArithError> {
        if other.0 == 0 {
            return Err(ArithError::DivisionByZero);
        }
        let scaled = self.0.checked_mul(WIDE_SCALE).ok_or(ArithError::Overflow)?;
        Ok(Millionths(div_round(scaled, other.0)))
    }

    /// The remainder of the floored quotient's Euclidean division: `0 <= r < |other|`.
    pub fn checked_rem(self, other: Millionths) -> Result<Millionths, ArithError> {
        if other.0 == 0 {
            return Err(ArithError::DivisionByZero);
        }
        // `rem_euclid` only overflows for MIN % -1, whose remainder is 0.
        Ok(Millionths(self.0.checked_rem_euclid(other.0).unwrap_or(0)))
    }

    /// The largest int not above the value, if it is an int.
    pub fn floor(self) -> Result<i64, ArithError> {
        narrow(self.0.div_euclid(WIDE_SCALE))
    }

    /// The smallest int not below the value, if it is an int.
    pub fn ceil(self) -> Result<i64, ArithError> {
        narrow(-(-self.0).div_euclid(WIDE_SCALE))
    }

    /// The nearest int, half away from zero, if it is an int.
    pub fn round(self) -> Result<i64, ArithError> {
        narrow(div_round(self.0, WIDE_SCALE))
    }
}

/// A whole count as an int, if it is within the int range.
fn narrow(n: i128) -> Result<i64, ArithError> {
    i64::try_from(n).map_err(|_| ArithError::Overflow)
}

impl From<Decimal> for Millionths {
    fn from(d: Decimal) -> Millionths {
        Millionths::of_decimal(d)
    }
}

impl Decimal {
    pub const ZERO: Decimal = Decimal(0);
    pub const ONE: Decimal = Decimal(SCALE);
    /// 9 223 372 036 854.775807.
    pub const MAX: Decimal = Decimal(i64::MAX);
    /// -9 223 372 036 854.775807.
    pub const MIN: Decimal = Decimal(-i64::MAX);

    /// The decimal `millionths / 1 000 000`; `i64::MIN` is out of range.
    pub fn from_millionths(millionths: i64) -> Result<Decimal, ArithError> {
        Millionths(i128::from(millionths)).to_decimal()
    }

    pub const fn millionths(self) -> i64 {
        self.0
    }

    /// An int widened to a decimal (an int becomes a decimal where a decimal is expected, EC).
    pub fn from_int(n: i64) -> Result<Decimal, ArithError> {
        Millionths::of_int(n).to_decimal()
    }

    /// Reads `digits`, `digits.digits`, optionally with a leading `-`. Places past the sixth round
    /// half away from zero, as every decimal step does.
    pub fn parse(text: &str) -> Result<Decimal, ParseDecimalError> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (whole, frac) = match rest.split_once('.') {
            Some((_, "")) => return Err(ParseDecimalError::Invalid),
            Some(parts) => parts,
            None => (rest, ""),
        };
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !all_digits(whole) || !all_digits(frac) {
            return Err(ParseDecimalError::Invalid);
        }
        let mut value: i128 = 0;
        for b in whole.bytes() {
            value = value * 10 + i128::from(b - b'0');
            if value > i128::from(i64::MAX) {
                return Err(ParseDecimalError::Overflow);
            }
        }
        let mut places = 0;
        for b in frac.bytes().take(PLACES) {
            value = value * 10 + i128::from(b - b'0');
            places += 1;
        }
        value *= 10i128.pow(PLACES as u32 - places);
        // Round on the seventh place; later places cannot change a half-away-from-zero result
        // except for an exact 5 followed by zeros, which still rounds away from zero.
        if frac.as_bytes().get(PLACES).is_some_and(|&b| b >= b'5') {
            value += 1;
        }
        let value = if negative { -value } else { value };
        Millionths(value)
            .to_decimal()
            .map_err(|_| ParseDecimalError::Overflow)
    }

    /// Applies a wide operation and checks its result against the range: the one mechanism of
    /// every decimal step.
    fn wide(
        self,
        other: Decimal,
        op: fn(Millionths, Millionths) -> Result<Millionths, ArithError>,
    ) -> Result<Decimal, ArithError> {
        op(self.into(), other.into())?.to_decimal()
    }

    pub fn checked_add(self, other: Decimal) -> Result<Decimal, ArithError> {
        self.wide(other, Millionths::checked_add)
    }

    pub fn checked_sub(self, other: Decimal) -> Result<Decimal, ArithError> {
        self.wide(other, Millionths::checked_sub)
    }

    /// Never fails: the range is symmetric.
    pub fn checked_neg(self) -> Result<Decimal, ArithError> {
        Ok(Decimal(-self.0))
    }

    /// The product kept to six places.
    pub fn checked_mul(self, other: Decimal) -> Result<Decimal, ArithError> {
        self.wide(other, Millionths::checked_mul)
    }

    /// The quotient kept to six places.
    pub fn checked_div(self, other: Decimal) -> Result<Decimal, ArithError> {
        self.wide(other, Millionths::checked_div)
    }

    /// The remainder of the floored quotient's Euclidean division: `0 <= r < |other|`.
    pub fn checked_rem(self, other: Decimal) -> Result<Decimal, ArithError> {
        self.wide(other, Millionths::checked_rem)
    }

    /// Never fails: the range is symmetric.
    pub fn abs(self) -> Result<Decimal, ArithError> {
        Ok(Decimal(self.0.abs()))
    }

    /// The largest int not above the value. Always fits: the value is at most `i64::MAX / 10⁶`.
    pub fn floor(self) -> i64 {
        self.0.div_euclid(SCALE)
    }

    /// The smallest int not below the value.
    pub fn ceil(self) -> i64 {
        -(-(i128::from(self.0))).div_euclid(i128::from(SCALE)) as i64
    }

    /// The nearest int, half away from zero (`2.5` is `3`, `-2.5` is `-3`).
    pub fn round(self) -> i64 {
        div_round(i128::from(self.0), i128::from(SCALE)) as i64
    }

    pub fn is_integer(self) -> bool {
        self.0 % SCALE == 0
    }

    pub fn is_negative(self) -> bool {
        self.0 < 0
    }

    /// The `f64` nearest to the value, for JSON output only. Up to 2⁵³ millionths the count is
    /// exact as an `f64` and one division rounds correctly; past it, two roundings could miss the
    /// nearest, so the text is read instead.
    pub fn to_f64(self) -> f64 {
        const EXACT: u64 = 1 << 53;
        if self.0.unsigned_abs() <= EXACT {
            self.0 as f64 / SCALE as f64
        } else {
            self.to_string().parse().unwrap_or(f64::NAN)
        }
    }
}

impl fmt::Display for Decimal {
    /// Always with a decimal point and without trailing zeros past the first place: `7.0`, `0.3`,
    /// `-1.25`, `0.000001`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let whole = abs / SCALE as u64;
        let frac = abs % SCALE as u64;
        let digits = format!("{frac:06}");
        let digits = digits.trim_end_matches('0');
        let digits = if digits.is_empty() { "0" } else { digits };
        write!(f, "{sign}{whole}.{digits}")
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap()
    }

    #[test]
    fn parses_and_prints() {
        for (text, printed) in [
            ("0", "0.0"),
            ("7", "7.0"),
            ("0.5", "0.5"),
            ("0.3", "0.3"),
            ("-1.25", "-1.25"),
            ("0.000001", "0.000001"),
            ("1.100000", "1.1"),
            // A seventh place rounds half away from zero.
            ("0.1234565", "0.123457"),
            ("0.1234564999", "0.123456"),
            ("-0.0000005", "-0.000001"),
            ("0.0000004", "0.0"),
            ("9223372036854.775807", "9223372036854.775807"),
            ("-9223372036854.775807", "-9223372036854.775807"),
        ] {
            assert_eq!(d(text).to_string(), printed, "{text}");
        }
        for bad in ["", ".5", "1.", "1.2.3", "a", "--1", "1e5", "-"] {
            assert_eq!(
                Decimal::parse(bad),
                Err(ParseDecimalError::Invalid),
                "{bad}"
            );
        }
        for out in [
            "9223372036855",
            "9223372036854.775808",
            "-9223372036854.775808",
        ] {
            assert_eq!(
                Decimal::parse(out),
                Err(ParseDecimalError::Overflow),
                "{out}"
            );
        }
    }

    #[test]
    fn six_place_arithmetic_is_exact() {
        assert_eq!(d("0.1").checked_add(d("0.2")), Ok(d("0.3")));
        assert_eq!(d("50").checked_mul(d("0.14")), Ok(d("7")));
        assert_eq!(d("50").checked_mul(d("0.14")).unwrap().ceil(), 7);
        assert_eq!(d("1").checked_div(d("3")), Ok(d("0.333333")));
        assert_eq!(d("2").checked_div(d("3")), Ok(d("0.666667")));
        assert_eq!(d("-2").checked_div(d("3")), Ok(d("-0.666667")));
        assert_eq!(d("0.000001").checked_mul(d("0.5")), Ok(d("0.000001")));
        assert_eq!(d("0.000001").checked_mul(d("0.4")), Ok(d("0")));
        assert_eq!(d("7").checked_rem(d("2.5")), Ok(d("2")));
        assert_eq!(d("-1").checked_rem(d("4")), Ok(d("3")));
        assert_eq!(
            d("1").checked_div(Decimal::ZERO),
            Err(ArithError::DivisionByZero)
        );
        assert_eq!(
            d("1").checked_rem(Decimal::ZERO),
            Err(ArithError::DivisionByZero)
        );
        let big = Decimal::MAX;
        assert_eq!(
            big.checked_add(Decimal::from_millionths(1).unwrap()),
            Err(ArithError::Overflow)
        );
        assert_eq!(
            Decimal::MIN.checked_sub(Decimal::from_millionths(1).unwrap()),
            Err(ArithError::Overflow)
        );
        assert_eq!(
            Decimal::from_millionths(i64::MIN),
            Err(ArithError::Overflow)
        );
        assert_eq!(Decimal::MIN.checked_neg(), Ok(Decimal::MAX));
        assert_eq!(Decimal::MIN.abs(), Ok(Decimal::MAX));
        assert_eq!(big.checked_mul(d("2")), Err(ArithError::Overflow));
        assert_eq!(Decimal::from_int(i64::MAX), Err(ArithError::Overflow));
    }

    #[test]
    fn rounds_to_int() {
        for (text, floor, ceil, round) in [
            ("2.5", 2, 3, 3),
            ("-2.5", -3, -2, -3),
            ("2.4", 2, 3, 2),
            ("-2.6", -3, -2, -3),
            ("3", 3, 3, 3),
            ("-0.000001", -1, 0, 0),
        ] {
            let v = d(text);
            assert_eq!(
                (v.floor(), v.ceil(), v.round()),
                (floor, ceil, round),
                "{text}"
            );
        }
        let min = Decimal::MIN;
        assert_eq!(min.floor(), -9_223_372_036_855);
        assert_eq!(min.round(), -9_223_372_036_855);
        assert_eq!(Decimal::MAX.ceil(), 9_223_372_036_855);
        assert_eq!(min.ceil(), -9_223_372_036_854);
    }
}
