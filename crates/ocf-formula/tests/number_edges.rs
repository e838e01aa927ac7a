//! Ints and decimals at the edges of their ranges, every operator and number function against an
//! exact reference (big rationals): formulas.md's "`arithmetic-overflow`: a result out of the range
//! of its type" means the result, not an operand or a step, is checked against its type's range
//! (ints: 64-bit; decimals: ±9 223 372 036 854.775807, six places rounded half away from zero).

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};
use ocf_formula::{Decimal, Formula, MapContext, Value};
use proptest::prelude::*;

/// A number as the reference sees it: its type and its exact value.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i64),
    /// Millionths.
    Dec(i64),
}

impl Num {
    fn exact(self) -> BigRational {
        match self {
            Num::Int(n) => BigRational::from_integer(n.into()),
            Num::Dec(m) => BigRational::new(m.into(), 1_000_000.into()),
        }
    }

    fn value(self) -> Value {
        match self {
            Num::Int(n) => Value::Int(n),
            Num::Dec(m) => Value::Decimal(Decimal::from_millionths(m).unwrap()),
        }
    }

    fn is_int(self) -> bool {
        matches!(self, Num::Int(_))
    }
}

/// What a user sees: the value as a formula literal writes it, or the error code.
type Seen = Result<String, &'static str>;

fn as_int(exact: &BigRational) -> Seen {
    exact
        .to_integer()
        .to_i64()
        .map(|n| n.to_string())
        .ok_or("arithmetic-overflow")
}

/// An exact value kept to six places (half away from zero) as a decimal, if in range.
fn as_decimal(exact: &BigRational) -> Seen {
    let millionths = (exact * BigRational::from_integer(1_000_000.into())).round();
    let m = millionths.to_integer();
    if m.abs() > BigInt::from(i64::MAX) {
        return Err("arithmetic-overflow");
    }
    Ok(Decimal::from_millionths(m.to_i64().unwrap())
        .unwrap()
        .to_string())
}

/// `a - |b| * floor(a / |b|)`: the remainder between 0 and the divisor.
fn euclid_rem(a: &BigRational, b: &BigRational) -> BigRational {
    let b = b.abs();
    a - &b * (a / &b).floor()
}

fn binary(op: &str, a: Num, b: Num) -> Seen {
    let (x, y) = (a.exact(), b.exact());
    let ints = a.is_int() && b.is_int();
    match op {
        "<" => Ok((x < y).to_string()),
        ">=" => Ok((x >= y).to_string()),
        "==" => Ok((x == y).to_string()),
        "/" | "%" if y.is_zero() => Err("division-by-zero"),
        "/" => as_decimal(&(x / y)),
        "%" if ints => as_int(&euclid_rem(&x, &y)),
        "%" => as_decimal(&euclid_rem(&x, &y)),
        _ => {
            let exact = match op {
                "+" => x + y,
                "-" => x - y,
                _ => x * y,
            };
            if ints {
                as_int(&exact)
            } else {
                as_decimal(&exact)
            }
        }
    }
}

fn unary(function: &str, a: Num) -> Seen {
    let x = a.exact();
    let same_type = |v: &BigRational| if a.is_int() { as_int(v) } else { as_decimal(v) };
    match function {
        "-" => same_type(&-x),
        "abs" => same_type(&x.abs()),
        "floor" => as_int(&x.floor()),
        "ceil" => as_int(&x.ceil()),
        _ => as_int(&x.round()),
    }
}

/// `min`/`max`/`sum` of some numbers: an int if all are ints, else a decimal.
fn aggregate(function: &str, numbers: &[Num]) -> Seen {
    let all_ints = numbers.iter().all(|n| n.is_int());
    let exact: Vec<BigRational> = numbers.iter().map(|n| n.exact()).collect();
    let result = match function {
        "min" => exact.iter().min().unwrap().clone(),
        "max" => exact.iter().max().unwrap().clone(),
        _ => exact.iter().sum(),
    };
    if all_ints {
        as_int(&result)
    } else {
        as_decimal(&result)
    }
}

fn eval(formula: &str, numbers: &[Num]) -> Seen {
    let mut ctx = MapContext::new();
    for (name, n) in ["a", "b", "c"].iter().zip(numbers) {
        ctx = ctx.with_field(name, n.value());
    }
    match Formula::parse(formula).unwrap().evaluate(&ctx) {
        Ok(value) => Ok(value.to_string()),
        Err(e) => Err(e.code.as_str()),
    }
}

fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0),
        Just(1),
        Just(-1),
        Just(10_000_000_000_000),
        Just(9_223_372_036_854),
        Just(-9_223_372_036_855),
        -1_000i64..1_000,
        any::<i64>(),
    ]
}

fn millionths() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(i64::MAX),
        Just(-i64::MAX),
        Just(0),
        Just(1),
        Just(-1),
        Just(500_000),
        Just(-2_500_000),
        -10_000_000i64..10_000_000,
        (-i64::MAX..=i64::MAX),
    ]
}

fn num() -> impl Strategy<Value = Num> {
    prop_oneof![int().prop_map(Num::Int), millionths().prop_map(Num::Dec)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn binary_operators_match_the_exact_reference(a in num(), b in num()) {
        for op in ["+", "-", "*", "/", "%", "<", ">=", "=="] {
            prop_assert_eq!(eval(&format!("a {op} b"), &[a, b]), binary(op, a, b), "{:?} {} {:?}", a, op, b);
        }
    }

    #[test]
    fn number_functions_match_the_exact_reference(a in num(), b in num(), c in num()) {
        prop_assert_eq!(eval("-a", &[a]), unary("-", a), "-{:?}", a);
        for f in ["abs", "floor", "ceil", "round"] {
            prop_assert_eq!(eval(&format!("{f}(a)"), &[a]), unary(f, a), "{}({:?})", f, a);
        }
        for f in ["min", "max"] {
            prop_assert_eq!(eval(&format!("{f}(a, b, c)"), &[a, b, c]), aggregate(f, &[a, b, c]), "{}", f);
        }
        prop_assert_eq!(eval("sum([a, b, c])", &[a, b, c]), aggregate("sum", &[a, b, c]));
    }

    /// A decimal's JSON is "a number with a point" (formulas.md): plain notation, never an
    /// exponent, and the digits themselves wherever a double holds them (15 significant digits).
    #[test]
    fn decimals_print_plainly_in_json(m in millionths()) {
        let d = Decimal::from_millionths(m).unwrap();
        let text = ocf_formula::json_text::to_string(&Value::Decimal(d).to_json()).unwrap();
        prop_assert!(text.contains('.') && !text.contains(['e', 'E']), "{}", text);
        prop_assert_eq!(text.parse::<f64>().unwrap(), d.to_f64());
        if m.unsigned_abs() < 1_000_000_000_000_000 {
            prop_assert_eq!(text, d.to_string());
        }
    }
}

/// The cases the issue gave, each an int past the decimal range whose result fits.
#[test]
fn ints_past_the_decimal_range_take_part_when_the_result_fits() {
    for (formula, seen) in [
        ("10000000000000 / 10", "1000000000000.0"),
        ("10000000000000 * 0.5", "5000000000000.0"),
        ("10000000000000 % 3.0", "1.0"),
        ("9223372036854775807 / 9223372036854775807", "1.0"),
        ("0.000001 * 9000000000000000000", "9000000000000.0"),
    ] {
        assert_eq!(eval(formula, &[]), Ok(seen.to_string()), "{formula}");
    }
    assert_eq!(
        eval("-9223372036854.775807 - 0.000001", &[]),
        Err("arithmetic-overflow")
    );
}
