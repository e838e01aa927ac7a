//! The `Context` contract: reads are lazy, context errors carry the range of what asked, and
//! `MapContext` reads its JSON form.

use std::cell::RefCell;

use ocf_formula::{Context, ContextError, ErrorCode, Formula, MapContext, Root, Value};
use proptest::prelude::*;
use serde_json::json;

/// A context that records which fields a formula read, as a sheet engine does, and reports the
/// field `loop` as circular.
#[derive(Default)]
struct Recording {
    read: RefCell<Vec<String>>,
}

impl Context for Recording {
    fn root(&self, root: Root) -> Result<Option<Value>, ContextError> {
        match root {
            Root::Links => Ok(None),
            _ => Err(ContextError::unknown(format!("`{root}` is not bound here"))),
        }
    }

    fn field(&self, id: &str) -> Result<Option<Value>, ContextError> {
        self.read.borrow_mut().push(id.to_string());
        match id {
            "loop" => Err(ContextError::new(
                ErrorCode::CircularFormula,
                "`loop` reads itself",
            )),
            _ => Ok(Some(Value::Int(id.len() as i64))),
        }
    }
}

#[test]
fn fields_are_read_only_when_reached() {
    for (text, value, read) in [
        ("a.b + ccc", "6", vec!["a.b", "ccc"]),
        ("false && a > 0", "false", vec![]),
        ("a > 0 || b > 0", "true", vec!["a"]),
        ("a > 5 ? bb : ccc", "3", vec!["a", "ccc"]),
        ("has(a) ? a : 0", "1", vec!["a", "a"]),
    ] {
        let ctx = Recording::default();
        let result = Formula::parse(text).unwrap().evaluate(&ctx).unwrap();
        assert_eq!(result.to_string(), value, "{text}");
        assert_eq!(*ctx.read.borrow(), read, "{text}");
    }
}

#[test]
fn context_errors_get_the_range_of_the_read() {
    let ctx = Recording::default();
    let err = Formula::parse("1 + loop")
        .unwrap()
        .evaluate(&ctx)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "circular-formula at 4..8: `loop` reads itself"
    );
    let err = Formula::parse("countCopies(true)")
        .unwrap()
        .evaluate(&ctx)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown-name at 0..17: the copy aggregates are not available here"
    );
    let absent = Formula::parse("has(links.crew)").unwrap().evaluate(&ctx);
    assert_eq!(absent, Ok(Value::Bool(false)));
    let absent = Formula::parse("links").unwrap().evaluate(&ctx).unwrap_err();
    assert_eq!(absent.code, ErrorCode::NoSuchKey);
}

#[test]
fn map_context_from_json() {
    let ctx = MapContext::from_json(&json!({
        "self": { "damage": { "$dice": "2d6 + 1d4 - 1" } },
        "fields": { "hp.max": 44 }
    }))
    .unwrap();
    let value = Formula::parse("self.damage")
        .unwrap()
        .evaluate(&ctx)
        .unwrap();
    assert_eq!(value.to_json(), json!("2d6 + 1d4 - 1"));
    assert_eq!(
        Formula::parse("hp.max").unwrap().evaluate(&ctx),
        Ok(Value::Int(44))
    );
    for (bad, message) in [
        (json!([]), "a context is a JSON object"),
        (
            json!({ "selff": 1 }),
            "`selff` is not a context root, `fields` or `families`",
        ),
        (json!({ "fields": 1 }), "`fields` must be an object"),
        (
            json!({ "self": { "$dice": "2d" } }),
            "`2d` is not dice notation",
        ),
        (
            json!({ "self": { "$dice": "'a'" } }),
            "`'a'` is not dice notation: a string is not dice",
        ),
    ] {
        let err = MapContext::from_json(&bad).unwrap_err().to_string();
        assert!(err.starts_with(message), "{bad}: {err}");
    }
}

proptest! {
    /// Decimal sums and products agree with exact integer arithmetic on millionths, and every
    /// decimal prints to text that reads back as itself.
    #[test]
    fn decimal_arithmetic_is_exact(a in -1_000_000_000_000i64..1_000_000_000_000, b in -1_000_000_000i64..1_000_000_000) {
        use ocf_formula::Decimal;
        let (x, y) = (Decimal::from_millionths(a).unwrap(), Decimal::from_millionths(b).unwrap());
        prop_assert_eq!(x.checked_add(y).unwrap().millionths(), a + b);
        prop_assert_eq!(Decimal::parse(&x.to_string()).unwrap(), x);
        let product = i128::from(a) * i128::from(b);
        let got = i128::from(x.checked_mul(y).unwrap().millionths());
        // Within half a millionth of the exact product, ties away from zero.
        let diff = got * 1_000_000 - product;
        prop_assert!(diff.abs() <= 500_000, "{} * {} = {}", x, y, got);
        if b != 0 {
            let q = i128::from(x.checked_div(y).unwrap().millionths());
            let exact = i128::from(a) * 1_000_000;
            prop_assert!((q * i128::from(b) - exact).abs() * 2 <= i128::from(b).abs());
        }
    }

    /// Any formula text gives a value or an error, never a panic.
    #[test]
    fn any_text_evaluates_or_fails_cleanly(text in "[a-z0-9 .()\\[\\]+*/%<>=!&|?:,'-]{0,40}") {
        let ctx = MapContext::new().with_field("a", Value::Int(1));
        if let Ok(formula) = Formula::parse(&text) {
            let _ = formula.evaluate(&ctx);
            let _ = formula.check(&ocf_formula::Env::new());
        }
    }
}

#[test]
fn formulas_and_values_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync + Eq>() {}
    shareable::<Formula>();
    shareable::<Value>();
    let formula = Formula::parse("1 + 2").unwrap();
    let handle = std::thread::spawn(move || formula.evaluate(&MapContext::new()));
    assert_eq!(handle.join().unwrap(), Ok(Value::Int(3)));
}
