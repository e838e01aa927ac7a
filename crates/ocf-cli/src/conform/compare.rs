//! Comparing a call's output with a case's expectation: the expectation is a subset of the output.
//!
//! Object keys the expectation does not give are not compared; lists compare element by element and must
//! have the same length; numbers compare by value (`7` matches `7.0`); everything else must be equal.

use serde_json::Value;

/// One place where the output does not match, as a JSON pointer into the output.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub pointer: String,
    pub expected: String,
    pub actual: String,
}

/// Every mismatch between `expected` and `actual`, in document order.
pub fn mismatches(expected: &Value, actual: &Value) -> Vec<Mismatch> {
    let mut out = Vec::new();
    walk(expected, Some(actual), &mut String::new(), &mut out);
    out
}

fn walk(expected: &Value, actual: Option<&Value>, pointer: &mut String, out: &mut Vec<Mismatch>) {
    let mismatch = |out: &mut Vec<Mismatch>, pointer: &str, actual: Option<&Value>| {
        out.push(Mismatch {
            pointer: if pointer.is_empty() {
                "/".to_string()
            } else {
                pointer.to_string()
            },
            expected: short(expected),
            actual: actual.map_or_else(|| "(absent)".to_string(), short),
        })
    };
    match (expected, actual) {
        (Value::Object(want), Some(Value::Object(have))) => {
            for (key, want) in want {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                walk(want, have.get(key), pointer, out);
                pointer.truncate(len);
            }
        }
        (Value::Array(want), Some(Value::Array(have))) => {
            if want.len() != have.len() {
                out.push(Mismatch {
                    pointer: if pointer.is_empty() {
                        "/".to_string()
                    } else {
                        pointer.clone()
                    },
                    expected: format!("a list of {}: {}", want.len(), short(expected)),
                    actual: format!("a list of {}: {}", have.len(), short(actual.unwrap())),
                });
                return;
            }
            for (i, (want, have)) in want.iter().zip(have).enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                walk(want, Some(have), pointer, out);
                pointer.truncate(len);
            }
        }
        (Value::Number(want), Some(Value::Number(have))) => {
            if !same_number(want, have) {
                mismatch(out, pointer, actual);
            }
        }
        (want, Some(have)) if want == have => {}
        _ => mismatch(out, pointer, actual),
    }
}

/// `expectIncludes`: for each JSON pointer, the given elements in the list there, in order, each
/// matching a later element than the one before it. One line per element not found.
pub fn missing_inclusions(
    includes: &serde_json::Map<String, Value>,
    actual: &Value,
) -> Vec<String> {
    let mut out = Vec::new();
    for (pointer, wanted) in includes {
        let Value::Array(wanted) = wanted else {
            out.push(format!("at {pointer}: `expectIncludes` gives a list"));
            continue;
        };
        let Some(Value::Array(have)) = actual.pointer(pointer) else {
            out.push(format!(
                "at {pointer}: expected a list, got (absent or not a list)"
            ));
            continue;
        };
        let mut next = 0;
        for want in wanted {
            match have[next..]
                .iter()
                .position(|h| mismatches(want, h).is_empty())
            {
                Some(i) => next += i + 1,
                None => out.push(format!(
                    "at {pointer}: expected to include {} (after element {}), not found",
                    short(want),
                    next
                )),
            }
        }
    }
    out
}

/// Numbers compare by value whatever their JSON spelling: integers exactly, others as doubles.
fn same_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) => x == y,
        _ => match (a.as_u64(), b.as_u64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.as_f64() == b.as_f64(),
        },
    }
}

/// A value in one line, cut to a readable length.
fn short(value: &Value) -> String {
    let text = ocf_formula::json_text::to_string(value).unwrap_or_default();
    const MAX: usize = 160;
    if text.len() <= MAX {
        return text;
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pointers(expected: Value, actual: Value) -> Vec<String> {
        mismatches(&expected, &actual)
            .into_iter()
            .map(|m| m.pointer)
            .collect()
    }

    #[test]
    fn keys_not_given_are_not_compared() {
        assert!(pointers(json!({"a": 1}), json!({"a": 1, "b": 2})).is_empty());
        assert_eq!(pointers(json!({"a": 1, "c": 3}), json!({"a": 1})), ["/c"]);
    }

    #[test]
    fn lists_compare_element_by_element_and_by_length() {
        assert!(pointers(json!([{"a": 1}, 2]), json!([{"a": 1, "b": 0}, 2])).is_empty());
        assert_eq!(pointers(json!([1, 2]), json!([1, 2, 3])), ["/"]);
        assert_eq!(
            pointers(json!({"l": [1, 5]}), json!({"l": [1, 2]})),
            ["/l/1"]
        );
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(pointers(json!(7), json!(7.0)).is_empty());
        assert!(pointers(json!(0.3), json!(0.3)).is_empty());
        assert_eq!(pointers(json!(7), json!(8)), ["/"]);
        assert_eq!(pointers(json!(7), json!("7")), ["/"]);
    }

    /// A report writes a decimal as formulas.md's JSON does: "a number with a point", no exponent.
    #[test]
    fn reports_write_decimals_plainly() {
        let report = mismatches(&json!([0.000002, 7.0]), &json!([0.000001, 7.5]));
        let texts: Vec<_> = report.iter().map(|m| (&*m.expected, &*m.actual)).collect();
        assert_eq!(texts, [("0.000002", "0.000001"), ("7.0", "7.5")]);
    }

    #[test]
    fn inclusions_match_in_order_with_others_between() {
        let includes = |v: Value| v.as_object().unwrap().clone();
        let actual = json!({"l": [{"a": 1}, {"a": 2, "b": 0}, {"a": 3}]});
        assert!(
            missing_inclusions(&includes(json!({"/l": [{"a": 1}, {"a": 3}]})), &actual).is_empty()
        );
        assert_eq!(
            missing_inclusions(&includes(json!({"/l": [{"a": 3}, {"a": 1}]})), &actual).len(),
            1
        );
        assert_eq!(
            missing_inclusions(&includes(json!({"/nowhere": [1]})), &actual).len(),
            1
        );
    }

    #[test]
    fn pointers_escape_keys() {
        assert_eq!(pointers(json!({"a/b": 1}), json!({})), ["/a~1b"]);
    }
}
