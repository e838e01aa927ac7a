//! Formula values (catalogue §1.8) and their JSON form.
//!
//! Values are cheap to clone (strings, lists, maps and dice sit behind an `Arc`) and are `Send + Sync
//! + Eq + Hash`, so that the sheet engine can memoize them. The derived `Eq` is structural (`1` and
//! `1.0` differ); the language's `==` is [`Value::equals`], which compares numbers by value.

use std::fmt;
use std::sync::Arc;

use ocf_dice::value::DiceValue;

use crate::decimal::{Decimal, Millionths, ParseDecimalError};

pub use crate::map::Map;

/// The member names the engines' own values use (a roll's result and items, a face, a step's
/// `action`, a change's): kept once per process, so a map made with them shares its keys instead of
/// allocating each one. [`kept_key`] gives each one's place.
const KEPT_KEYS: [&str; 40] = [
    "action",
    "band",
    "bandSet",
    "bandValue",
    "bounds",
    "by",
    "change",
    "count",
    "dropped",
    "empty",
    "entry",
    "exploded",
    "faces",
    "factor",
    "field",
    "id",
    "item",
    "items",
    "kept",
    "kind",
    "modifiers",
    "multiplied",
    "replaces",
    "rerolled",
    "result",
    "self",
    "set",
    "sides",
    "source",
    "split",
    "step",
    "steppedFrom",
    "tags",
    "tallies",
    "to",
    "total",
    "type",
    "unbounded",
    "value",
    "values",
];

fn kept_key(name: &str) -> Option<usize> {
    // A `match` on strings compiles to a test of the length, then of the bytes.
    Some(match name {
        "action" => 0,
        "band" => 1,
        "bandSet" => 2,
        "bandValue" => 3,
        "bounds" => 4,
        "by" => 5,
        "change" => 6,
        "count" => 7,
        "dropped" => 8,
        "empty" => 9,
        "entry" => 10,
        "exploded" => 11,
        "faces" => 12,
        "factor" => 13,
        "field" => 14,
        "id" => 15,
        "item" => 16,
        "items" => 17,
        "kept" => 18,
        "kind" => 19,
        "modifiers" => 20,
        "multiplied" => 21,
        "replaces" => 22,
        "rerolled" => 23,
        "result" => 24,
        "self" => 25,
        "set" => 26,
        "sides" => 27,
        "source" => 28,
        "split" => 29,
        "step" => 30,
        "steppedFrom" => 31,
        "tags" => 32,
        "tallies" => 33,
        "to" => 34,
        "total" => 35,
        "type" => 36,
        "unbounded" => 37,
        "value" => 38,
        "values" => 39,
        _ => return None,
    })
}

/// What a map's member name can be made from.
pub trait MapKey {
    fn into_key(self) -> Arc<str>;
}

impl MapKey for Arc<str> {
    fn into_key(self) -> Arc<str> {
        self
    }
}

impl MapKey for &Arc<str> {
    fn into_key(self) -> Arc<str> {
        self.clone()
    }
}

impl MapKey for &str {
    fn into_key(self) -> Arc<str> {
        key(self)
    }
}

impl MapKey for String {
    fn into_key(self) -> Arc<str> {
        key(&self)
    }
}

impl MapKey for &String {
    fn into_key(self) -> Arc<str> {
        key(self)
    }
}

impl MapKey for Box<str> {
    fn into_key(self) -> Arc<str> {
        key(&self)
    }
}

/// A map key: the kept one when `name` is one of [`KEPT_KEYS`], else the shared one
/// ([`shared`]).
pub fn key(name: &str) -> Arc<str> {
    static KEYS: std::sync::LazyLock<Vec<Arc<str>>> =
        std::sync::LazyLock::new(|| KEPT_KEYS.iter().map(|k| Arc::from(*k)).collect());
    match kept_key(name) {
        Some(i) => KEYS[i].clone(),
        None => shared(name),
    }
}

/// How many names [`shared`] keeps, and how long each may be: at most 8 192 names of 48 bytes.
const SHARED_NAMES: usize = 1 << 13;
const SHARED_NAME_LEN: usize = 48;

/// `text` as a string shared across the process: the member names, tags and IDs values are made
/// of are the rulesets' own, and the same few recur in every call (a view's `conditions`, a roll
/// item's source, `damage.fire`). Values are immutable behind their `Arc`s, so one copy serves
/// every value that holds it. A long text, or any once `SHARED_NAMES` are kept (untrusted input
/// can fill the table, never grow it), is made anew ([`crate::bounded::BoundedTable`]).
pub fn shared(text: &str) -> Arc<str> {
    static NAMES: crate::bounded::BoundedTable<Arc<str>, Arc<str>> =
        crate::bounded::BoundedTable::new(SHARED_NAMES);
    if text.len() > SHARED_NAME_LEN {
        return Arc::from(text);
    }
    NAMES.get_or_make(text, || {
        let made: Arc<str> = Arc::from(text);
        (made.clone(), made)
    })
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Decimal(Decimal),
    String(Arc<str>),
    List(Arc<Vec<Value>>),
    Map(Arc<Map>),
    Dice(Arc<DiceValue>),
}

impl Value {
    pub fn string(s: impl Into<Arc<str>>) -> Value {
        Value::String(s.into())
    }

    /// A list of `items`; the empty list is one shared value (values are immutable behind their
    /// `Arc`s).
    pub fn list(items: Vec<Value>) -> Value {
        static EMPTY: std::sync::LazyLock<Arc<Vec<Value>>> =
            std::sync::LazyLock::new(|| Arc::new(Vec::new()));
        if items.is_empty() {
            return Value::List(EMPTY.clone());
        }
        Value::List(Arc::new(items))
    }

    /// A map of `members` (a name given twice keeps its last value); a member name among the
    /// kept ones ([`key`]) is shared, not made ([`Map::from_entries`]: members in order are
    /// taken as they are, others sorted once).
    pub fn map<K: MapKey>(members: impl IntoIterator<Item = (K, Value)>) -> Value {
        static EMPTY: std::sync::LazyLock<Arc<Map>> =
            std::sync::LazyLock::new(|| Arc::new(Map::new()));
        let map = Map::from_entries(
            members
                .into_iter()
                .map(|(k, v)| (k.into_key(), v))
                .collect(),
        );
        if map.is_empty() {
            return Value::Map(EMPTY.clone());
        }
        Value::Map(Arc::new(map))
    }

    pub fn dice(dice: DiceValue) -> Value {
        Value::Dice(Arc::new(dice))
    }

    /// The name of the value's type, as messages and the type checker write it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Decimal(_) => "decimal",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Dice(_) => "dice",
        }
    }

    /// The value as a decimal if it is a number (an int widens) within the decimal range: an int
    /// past it gives `None`. Arithmetic takes ints of any size through [`crate::arith::apply`] or
    /// [`Value::as_millionths`] instead, checking only the result.
    pub fn as_decimal(&self) -> Option<Decimal> {
        match self {
            Value::Int(n) => Decimal::from_int(*n).ok(),
            Value::Decimal(d) => Some(*d),
            _ => None,
        }
    }

    /// The value as exact millionths if it is a number, an int of any size included.
    pub fn as_millionths(&self) -> Option<Millionths> {
        match self {
            Value::Int(n) => Some(Millionths::of_int(*n)),
            Value::Decimal(d) => Some(Millionths::of_decimal(*d)),
            _ => None,
        }
    }

    /// The language's `==`: deep equality where an int equals the decimal of the same value.
    pub fn equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(_), Value::Decimal(_)) | (Value::Decimal(_), Value::Int(_)) => {
                self.as_millionths() == other.as_millionths()
            }
            (Value::List(a), Value::List(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.equals(y))
            }
            (Value::Map(a), Value::Map(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|((ka, va), (kb, vb))| ka == kb && va.equals(vb))
            }
            _ => self == other,
        }
    }

    /// Converts JSON: integers that fit an `i64` become ints, other numbers six-place decimals,
    /// objects maps, arrays lists, strings strings (a dice notation stays a string).
    pub fn from_json(json: &serde_json::Value) -> Result<Value, JsonError> {
        Ok(match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::Int(i)
                } else {
                    // `u64` past `i64::MAX`, or a float: read the shortest text of the float, which
                    // is what the author wrote for any number with up to 15 significant digits.
                    let text = match n.as_u64() {
                        Some(u) => u.to_string(),
                        None => format_f64(n.as_f64().unwrap_or(f64::NAN)),
                    };
                    Value::Decimal(Decimal::parse(&text).map_err(|e| match e {
                        ParseDecimalError::Overflow => {
                            JsonError(format!("number {n} is too large"))
                        }
                        ParseDecimalError::Invalid => JsonError(format!("number {n} is not valid")),
                    })?)
                }
            }
            serde_json::Value::String(s) => Value::string(s.as_str()),
            serde_json::Value::Array(items) => Value::list(
                items
                    .iter()
                    .map(Value::from_json)
                    .collect::<Result<_, _>>()?,
            ),
            serde_json::Value::Object(members) => {
                let map = Map::from_entries(
                    members
                        .iter()
                        .map(|(k, v)| Ok((key(k), Value::from_json(v)?)))
                        .collect::<Result<_, JsonError>>()?,
                );
                Value::Map(Arc::new(map))
            }
        })
    }

    /// The value as formula text, as the standard printer writes literals (`'it\'s'`, `2d6`,
    /// `[1, 2]`); a map has none.
    pub fn literal(&self) -> Option<String> {
        Some(match self {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(n) => n.to_string(),
            Value::Decimal(_) => self.to_json().to_string(),
            Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Value::Dice(d) => d.to_string(),
            Value::List(l) => {
                let items: Option<Vec<String>> = l.iter().map(Value::literal).collect();
                format!("[{}]", items?.join(", "))
            }
            Value::Map(_) => return None,
        })
    }

    /// The value as JSON "as data" (EA): a decimal always with a point (`7.0`), dice in canonical
    /// notation (`"2d6 + 1"`).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(n) => serde_json::Value::from(*n),
            // serde_json prints an integral f64 as `7.0`; six places always survive an f64 round
            // trip for the magnitudes decimals have.
            Value::Decimal(d) => serde_json::Number::from_f64(d.to_f64())
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
            Value::String(s) => serde_json::Value::String(s.to_string()),
            Value::List(items) => items.iter().map(Value::to_json).collect(),
            Value::Map(members) => serde_json::Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_json()))
                    .collect(),
            ),
            Value::Dice(d) => serde_json::Value::String(d.to_string()),
        }
    }
}

/// Rust prints floats without an exponent, in the shortest form that reads back.
fn format_f64(f: f64) -> String {
    if f.is_finite() {
        format!("{f}")
    } else {
        "NaN".to_string()
    }
}

/// A JSON value that has no formula value (a number out of range).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError(pub String);

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JsonError {}

impl fmt::Display for Value {
    /// The value as a formula literal would write it (`'fire'`, `[1, 2.5]`, `2d6 + 1`), strings
    /// quoted as the standard printer quotes them; a map, which has no literal, is written
    /// `{ key: value }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Decimal(d) => write!(f, "{d}"),
            Value::String(s) => f.write_str(&ocf_syntax::quote_string(s)),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Map(members) => {
                if members.is_empty() {
                    return f.write_str("{}");
                }
                f.write_str("{ ")?;
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str(" }")
            }
            Value::Dice(d) => write!(f, "{d}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocf_dice::value::{DiceTerm, Die};
    use serde_json::json;

    fn assert_send_sync_hash<T: Send + Sync + Eq + std::hash::Hash>() {}

    #[test]
    fn kept_keys_are_shared() {
        for (i, name) in KEPT_KEYS.iter().enumerate() {
            assert_eq!(kept_key(name), Some(i), "{name}");
            assert!(Arc::ptr_eq(&key(name), &key(name)), "{name}");
        }
        assert_eq!(kept_key("values2"), None);
        assert_eq!(&*key("elsewhere"), "elsewhere");
    }

    #[test]
    fn short_names_are_shared_across_values() {
        assert!(Arc::ptr_eq(&shared("damage.fire"), &shared("damage.fire")));
        assert!(Arc::ptr_eq(&key("conditions"), &shared("conditions")));
        // A long text is made anew each time, so no input grows the table with it.
        let long = "x".repeat(SHARED_NAME_LEN + 1);
        assert!(!Arc::ptr_eq(&shared(&long), &shared(&long)));
        assert_eq!(&*shared(&long), long);
    }

    #[test]
    fn empty_lists_and_maps_are_one_value() {
        let (a, b) = (Value::list(Vec::new()), Value::list(Vec::new()));
        assert!(matches!((&a, &b), (Value::List(x), Value::List(y)) if Arc::ptr_eq(x, y)));
        let m = Value::map(Vec::<(&str, Value)>::new());
        assert_eq!(m, Value::Map(Arc::new(Map::new())));
        // Later members replace earlier ones of the same name, as collecting did.
        let m = Value::map([("a", Value::Int(1)), ("a", Value::Int(2))]);
        assert_eq!(m, Value::map([("a", Value::Int(2))]));
    }

    #[test]
    fn values_can_be_memoized() {
        assert_send_sync_hash::<Value>();
    }

    #[test]
    fn json_round_trip() {
        let json = json!({
            "int": 7, "decimal": 7.0, "half": 0.5, "neg": -1.25,
            "list": [1, "a", true, null], "map": { "b": 1, "a": 2 }
        });
        let value = Value::from_json(&json).unwrap();
        let Value::Map(m) = &value else {
            panic!("not a map")
        };
        assert_eq!(m.get("int"), Some(&Value::Int(7)));
        assert_eq!(
            m.get("decimal"),
            Some(&Value::Decimal(Decimal::from_int(7).unwrap()))
        );
        assert_eq!(m.get("half").unwrap().to_string(), "0.5");
        assert_eq!(m.get("neg").unwrap().to_string(), "-1.25");
        let out = serde_json::to_string(&value.to_json()).unwrap();
        assert_eq!(
            out,
            r#"{"decimal":7.0,"half":0.5,"int":7,"list":[1,"a",true,null],"map":{"a":2,"b":1},"neg":-1.25}"#
        );
        assert!(Value::from_json(&json!(1e300)).is_err());
        assert!(Value::from_json(&json!(18446744073709551615u64)).is_err());
        assert_eq!(Value::from_json(&json!(1e-7)).unwrap().to_string(), "0.0");
    }

    #[test]
    fn dice_print_as_notation() {
        let dice = DiceValue::from_term(DiceTerm::new(2, Die::Sides(6), vec![]))
            .add(&DiceValue::flat(1))
            .unwrap();
        assert_eq!(Value::dice(dice).to_json(), json!("2d6 + 1"));
    }

    #[test]
    fn equality_compares_numbers_by_value() {
        let one = Value::Int(1);
        let one_dec = Value::Decimal(Decimal::ONE);
        assert!(one.equals(&one_dec));
        assert_ne!(one, one_dec);
        let a = Value::list(vec![one.clone(), Value::string("x")]);
        let b = Value::list(vec![one_dec, Value::string("x")]);
        assert!(a.equals(&b));
        assert!(!a.equals(&Value::list(vec![one])));
        assert_eq!(Value::string("it's").to_string(), r"'it\'s'");
        // Every string prints as a literal that reads back as itself.
        for s in ["it's", "a\\b", "line\nbreak", "tab\t", "\"q\""] {
            let printed = Value::string(s).to_string();
            let read = crate::Formula::parse(&printed)
                .unwrap()
                .evaluate(&crate::MapContext::new());
            assert_eq!(read, Ok(Value::string(s)), "{printed}");
        }
    }
}
