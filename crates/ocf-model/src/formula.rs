//! Formulas as the data holds them: text, parsed by `ocf-formula`, never here.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::Tag;
use crate::shape::{self, Never, Shape};

/// A formula's source text. YAML writes many formulas as plain scalars (`value: 19`, `when: true`,
/// `by: -1`), which YAML reads as numbers and booleans: those are kept as the text they stand for. A
/// decimal keeps its point (`2.0`), so it stays a decimal literal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Formula(pub String);

impl Formula {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Formula {
    fn from(text: &str) -> Self {
        Self(text.to_owned())
    }
}

impl<'de> Deserialize<'de> for Formula {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FormulaVisitor;

        impl Visitor<'_> for FormulaVisitor {
            type Value = Formula;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a formula (a string, number or boolean)")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Formula, E> {
                Ok(Formula(v.to_owned()))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Formula, E> {
                Ok(Formula(v.to_string()))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Formula, E> {
                Ok(Formula(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Formula, E> {
                Ok(Formula(v.to_string()))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Formula, E> {
                if !v.is_finite() {
                    return Err(E::invalid_value(de::Unexpected::Float(v), &self));
                }
                // `{:?}` keeps the point of a whole decimal: `2.0`, not `2`.
                Ok(Formula(format!("{v:?}")))
            }
        }

        deserializer.deserialize_any(FormulaVisitor)
    }
}

/// YAML writes `value: 19` and `when: true`; both are formulas.
impl JsonSchema for Formula {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Formula".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A formula (docs/spec/formulas.md): its text, or a number or boolean YAML \
                            reads, which stands for the same text.",
            "type": ["string", "number", "boolean"],
        })
    }
}

/// A property that takes a literal but may switch to a formula with the `{ formula: <expr> }` wrapper
/// (catalogue §1.1): field tags, computed tags, grant values, computed fields and entries of changes.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields, rename = "Computed_{T}")]
pub enum Computed<T> {
    Literal(T),
    Formula { formula: Formula },
}

/// The `{ formula }` wrapper itself, with no other key.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FormulaWrapper {
    formula: Formula,
}

impl<'de, T: Deserialize<'de> + 'static> Deserialize<'de> for Computed<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, T, FormulaWrapper, Never>(
            deserializer,
            "a literal or `{ formula: <expr> }`",
        )? {
            Shape::Scalar(literal) => Ok(Computed::Literal(literal)),
            Shape::Map(FormulaWrapper { formula }) => Ok(Computed::Formula { formula }),
            Shape::List(never) => match never {},
        }
    }
}

/// An entry of a tags list: a tag, or `{ formula }` giving one tag or a list of tags.
pub type TagEntry = Computed<Tag>;
