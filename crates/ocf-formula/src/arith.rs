//! Arithmetic on number values: what `+ - * / %` do to ints and decimals (formulas.md, Operators),
//! in one place so that whatever else combines numbers (the sheet engine's effects) can agree.
//!
//! Two ints stay an int except for `/`; anything with a decimal is a decimal, kept to six places.
//! The work is done on exact wide values and only the result is checked against its type's range
//! ("`arithmetic-overflow`: a result out of the range of its type"), so an int past the decimal
//! range may take part in decimal arithmetic whose result fits.

use crate::decimal::{ArithError, Millionths};
use crate::value::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberOp {
    Add,
    Sub,
    Mul,
    Div,
    /// The remainder between 0 and the divisor (`-7 % 3` is `2`).
    Rem,
}

/// `a op b` if both are numbers, else `None`.
pub fn apply(op: NumberOp, a: &Value, b: &Value) -> Option<Result<Value, ArithError>> {
    Some(match (a, b) {
        (Value::Int(x), Value::Int(y)) if op != NumberOp::Div => ints(op, *x, *y).map(Value::Int),
        _ => wide(op, a.as_millionths()?, b.as_millionths()?)
            .and_then(Millionths::to_decimal)
            .map(Value::Decimal),
    })
}

fn ints(op: NumberOp, x: i64, y: i64) -> Result<i64, ArithError> {
    match op {
        NumberOp::Add => x.checked_add(y),
        NumberOp::Sub => x.checked_sub(y),
        NumberOp::Mul => x.checked_mul(y),
        NumberOp::Rem if y == 0 => return Err(ArithError::DivisionByZero),
        // `rem_euclid` only overflows for MIN % -1, whose remainder is 0.
        NumberOp::Rem => Some(x.checked_rem_euclid(y).unwrap_or(0)),
        NumberOp::Div => unreachable!("`/` of ints is a decimal"),
    }
    .ok_or(ArithError::Overflow)
}

fn wide(op: NumberOp, x: Millionths, y: Millionths) -> Result<Millionths, ArithError> {
    match op {
        NumberOp::Add => x.checked_add(y),
        NumberOp::Sub => x.checked_sub(y),
        NumberOp::Mul => x.checked_mul(y),
        NumberOp::Div => x.checked_div(y),
        NumberOp::Rem => x.checked_rem(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decimal::Decimal;

    fn dec(text: &str) -> Value {
        Value::Decimal(Decimal::parse(text).unwrap())
    }

    #[test]
    fn ints_stay_ints_except_for_division() {
        let (seven, two) = (Value::Int(7), Value::Int(2));
        assert_eq!(apply(NumberOp::Add, &seven, &two), Some(Ok(Value::Int(9))));
        assert_eq!(
            apply(NumberOp::Rem, &Value::Int(-7), &Value::Int(3)),
            Some(Ok(Value::Int(2)))
        );
        assert_eq!(apply(NumberOp::Div, &seven, &two), Some(Ok(dec("3.5"))));
        assert_eq!(apply(NumberOp::Mul, &dec("0.5"), &two), Some(Ok(dec("1"))));
        assert_eq!(apply(NumberOp::Add, &seven, &Value::string("a")), None);
    }

    #[test]
    fn only_the_result_is_checked() {
        let big = Value::Int(10_000_000_000_000);
        assert_eq!(
            apply(NumberOp::Div, &big, &Value::Int(10)),
            Some(Ok(dec("1000000000000")))
        );
        assert_eq!(
            apply(NumberOp::Add, &big, &dec("0.5")),
            Some(Err(ArithError::Overflow))
        );
        assert_eq!(
            apply(NumberOp::Rem, &dec("1"), &Value::Int(0)),
            Some(Err(ArithError::DivisionByZero))
        );
        assert_eq!(
            apply(NumberOp::Add, &Value::Int(i64::MAX), &Value::Int(1)),
            Some(Err(ArithError::Overflow))
        );
    }
}
