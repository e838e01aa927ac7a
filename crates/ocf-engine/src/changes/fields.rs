//! `set` and `adjust`: an input field's saved value. A `set` writes its value (checked against the
//! field's type and bounds); an `adjust` is routed ([`super::routing`]) and lands on the field, its
//! absorbing fields and its overflow.

use ocf_formula::Value;
use ocf_formula::decimal::Millionths;
use ocf_model::{Change, Computed, FieldType};
use serde_json::{Map, Value as Json, json};

use super::applier::{Applier, type_mismatch};
use super::batch::ChangeError;
use super::eval::Scope;

impl Applier<'_, '_> {
    /// The change's `field`: written or computed, qualified as a saved value's key is, an input
    /// field of the ruleset (`unknown-field`, `not-input-field`; EA, changes).
    pub fn change_field(
        &self,
        change: &Change,
        scope: &Scope,
        path: &str,
    ) -> Result<String, ChangeError> {
        let at = format!("{path}/field");
        let written = match &change.field {
            Some(Computed::Literal(id)) => id.as_str().to_owned(),
            Some(Computed::Formula { formula }) => {
                self.eval_string(formula, scope, &format!("{at}/formula"))?
            }
            None => {
                return Err(ChangeError::new(
                    "schema-error",
                    at,
                    "the change names no field",
                ));
            }
        };
        self.input_field(&written, &at)
    }

    /// `id` qualified, checked to be an input field.
    pub fn input_field(&self, id: &str, at: &str) -> Result<String, ChangeError> {
        let qualified = crate::input::qualify_saved(&self.ruleset, &self.file, id);
        let Some(decl) = self.ruleset.field(&qualified) else {
            return Err(
                ChangeError::new("unknown-field", at, format!("no field `{id}`"))
                    .with_data(json!({ "field": id })),
            );
        };
        if decl.decl.input != Some(true) {
            return Err(ChangeError::new(
                "not-input-field",
                at,
                format!("`{qualified}` is not an input field"),
            )
            .with_data(json!({ "field": qualified })));
        }
        Ok(qualified)
    }

    /// The field's value before effects: its saved value, else its default.
    pub fn raw(&self, field: &str) -> Value {
        let c = self.input();
        let field = field.to_owned();
        self.deep(move |db| crate::view::raw_input(db, c, &field))
            .unwrap_or(Value::Null)
    }

    /// Writes a field's saved value, under the key the file already saves it by.
    pub fn save(&mut self, field: &str, value: Json) {
        let ruleset = self.ruleset.clone();
        let file = &self.file;
        let key = file
            .values
            .iter()
            .map(|(k, _)| k)
            .find(|k| crate::input::qualify_saved(&ruleset, file, k) == field)
            .map(str::to_owned)
            .unwrap_or_else(|| field.to_owned());
        self.file.values.0.insert(key, value);
    }

    /// A field's `min` and `max`, evaluated in its pack.
    pub fn bounds(
        &self,
        field: &str,
        path: &str,
    ) -> Result<(Option<Value>, Option<Value>), ChangeError> {
        let Some(decl) = self.ruleset.field(field) else {
            return Ok((None, None));
        };
        let scope = Scope::in_pack(decl.pack.clone());
        let eval = |f: &Option<ocf_model::Formula>| -> Result<Option<Value>, ChangeError> {
            match f {
                Some(f) => self.eval(f.as_str(), &scope, path).map(Some),
                None => Ok(None),
            }
        };
        Ok((eval(&decl.decl.min)?, eval(&decl.decl.max)?))
    }

    /// `set`: the value, of the field's type, within its bounds (not strict: clamped and reported).
    pub fn set(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let field = self.change_field(change, scope, path)?;
        let at = format!("{path}/value");
        let Some(formula) = &change.value else {
            return Err(ChangeError::new(
                "schema-error",
                at,
                "a `set` needs `value`",
            ));
        };
        let value = self.eval(formula.as_str(), scope, &at)?;
        let ty = self.ruleset.field(&field).map(|d| d.decl.r#type);
        let mut value = typed(ty, value, &at)?;
        if let (Some(decl), Value::String(s)) = (self.ruleset.field(&field), &value)
            && decl.decl.r#type == FieldType::Enum
            && !decl.decl.values.iter().any(|v| v.as_str() == Some(s))
        {
            return Err(ChangeError::new(
                "invalid-option",
                at,
                format!("`{s}` is not one of the field's values"),
            )
            .with_data(json!({ "field": field, "option": s.to_string() })));
        }
        let (min, max) = self.bounds(&field, &at)?;
        let clamped = clamp(&value, min.as_ref(), max.as_ref());
        if !clamped.equals(&value) {
            self.soft(
                ChangeError::new(
                    "out-of-range",
                    &at,
                    format!("{value} is outside the field's bounds; saved as {clamped}"),
                )
                .with_data(
                    json!({ "field": field, "value": value.to_json(), "bound": clamped.to_json() }),
                ),
            )?;
            value = clamped;
        }
        let before = self.raw(&field);
        self.save(&field, value.to_json());
        let mut record = Map::new();
        record.insert("field".into(), field.into());
        record.insert("from".into(), before.to_json());
        record.insert("to".into(), value.to_json());
        Ok(record)
    }

    /// `adjust`: `by` (a number) routed through the character's incoming-change effects, then
    /// through absorbing fields and overflow; then the counted effects' `then` changes.
    pub fn adjust(
        &mut self,
        path: &str,
        change: &Change,
        written: &mut Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let field = self.change_field(change, scope, path)?;
        let ty = self.ruleset.field(&field).map(|d| d.decl.r#type);
        if !matches!(ty, Some(FieldType::Integer | FieldType::Decimal)) {
            return Err(ChangeError::new(
                "type-mismatch",
                format!("{path}/field"),
                format!("`{field}` is not a number field"),
            ));
        }
        let at = format!("{path}/by");
        let Some(by) = &change.by else {
            return Err(ChangeError::new(
                "schema-error",
                at,
                "an `adjust` needs `by`",
            ));
        };
        let by = self.eval(by.as_str(), scope, &at)?;
        // A decimal `by` on an integer field is kept: the amount rounds at the end of routing
        // (EF, "Rounding").
        let by = match (ty, by) {
            (Some(FieldType::Integer), Value::Decimal(d)) if !d.is_integer() => Value::Decimal(d),
            (_, by) => typed(ty, by, &at)?,
        };
        let tags = self.change_tags(change, scope, path)?;
        let situational = self.situational(change, path)?;
        // A `forEach` adjust's elements take the change's faces in turn, each after the faces the
        // elements before it used; every face used, given or rolled, is written back in order.
        let given = change.faces.get(self.faces_next..).unwrap_or(&[]);
        let routed = self.route(path, &field, &by, &tags, given, &situational)?;
        self.faces_next += routed.given_used;
        self.faces_used.extend_from_slice(&routed.faces);
        if !self.faces_used.is_empty() || !change.faces.is_empty() {
            written.faces = self.faces_used.clone();
        }
        let placed = self.place(path, &field, &routed.amount)?;
        self.then_changes(path, &routed)?;
        let mut record = Map::new();
        record.insert("field".into(), field.into());
        record.insert("by".into(), by.to_json());
        record.insert("amount".into(), routed.amount.to_json());
        record.insert("tags".into(), tags.into());
        record.insert("effects".into(), Json::Array(routed.steps.clone()));
        record.insert("to".into(), Json::Array(placed));
        Ok(record)
    }

    /// The change's tags: written, or computed (a string or a list of strings each).
    fn change_tags(
        &self,
        change: &Change,
        scope: &Scope,
        path: &str,
    ) -> Result<Vec<String>, ChangeError> {
        let mut tags = Vec::new();
        for (i, tag) in change.tags.iter().enumerate() {
            match tag {
                Computed::Literal(t) => tags.push(t.as_str().to_owned()),
                Computed::Formula { formula } => {
                    let at = format!("{path}/tags/{i}");
                    match self.eval(formula.as_str(), scope, &at)? {
                        Value::String(s) => tags.push(s.to_string()),
                        Value::List(items) => {
                            for item in items.iter() {
                                match item {
                                    Value::String(s) => tags.push(s.to_string()),
                                    other => return Err(type_mismatch(&at, "a tag", other)),
                                }
                            }
                        }
                        other => return Err(type_mismatch(&at, "a tag or a list of tags", &other)),
                    }
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        tags.retain(|t| seen.insert(t.clone()));
        Ok(tags)
    }
}

/// `incoming` as an incoming-change effect sees it: `{ amount, field, tags }` (EF, "The incoming
/// amount").
pub fn incoming_value(by: &Value, field: &str, tags: &[String]) -> Value {
    Value::map([
        ("amount", by.clone()),
        ("field", Value::string(field)),
        (
            "tags",
            Value::list(tags.iter().map(|t| Value::string(t.as_str())).collect()),
        ),
    ])
}

/// A value as a field of type `ty` holds it: an integral decimal for an integer field becomes an
/// int, an int for a decimal field a decimal; a value of another type is `type-mismatch`.
pub fn typed(ty: Option<FieldType>, value: Value, at: &str) -> Result<Value, ChangeError> {
    let Some(ty) = ty else { return Ok(value) };
    let ok = match (ty, &value) {
        (FieldType::Integer, Value::Int(_)) => true,
        (FieldType::Integer, Value::Decimal(d)) if d.is_integer() => {
            return Ok(Value::Int(d.floor()));
        }
        (FieldType::Decimal, Value::Int(n)) => {
            return ocf_formula::decimal::Decimal::from_int(*n)
                .map(Value::Decimal)
                .map_err(|_| type_mismatch(at, "a decimal", &value));
        }
        (FieldType::Decimal, Value::Decimal(_)) => true,
        (FieldType::Boolean, Value::Bool(_)) => true,
        (FieldType::String | FieldType::Enum | FieldType::Id, Value::String(_)) => true,
        (FieldType::Set, Value::List(_)) => true,
        (FieldType::Dice, Value::Dice(_)) => true,
        (FieldType::Dice, Value::Int(n)) => {
            return Ok(Value::dice(ocf_dice::value::DiceValue::flat(*n)));
        }
        _ => false,
    };
    if ok {
        Ok(value)
    } else {
        let wanted = serde_json::to_value(ty)
            .ok()
            .and_then(|v| v.as_str().map(|s| format!("a value of a `{s}` field")))
            .unwrap_or_default();
        Err(type_mismatch(at, &wanted, &value))
    }
}

/// A number kept within `min` and `max`.
pub fn clamp(value: &Value, min: Option<&Value>, max: Option<&Value>) -> Value {
    let Some(v) = value.as_millionths() else {
        return value.clone();
    };
    let as_type = |bound: &Value| match value {
        Value::Int(_) => bound
            .as_millionths()
            .and_then(|m| m.floor().ok())
            .map(Value::Int)
            .unwrap_or_else(|| bound.clone()),
        _ => bound
            .as_decimal()
            .map(Value::Decimal)
            .unwrap_or_else(|| bound.clone()),
    };
    if let Some(min) = min
        && let Some(m) = min.as_millionths()
        && v.get() < m.get()
    {
        return as_type(min);
    }
    if let Some(max) = max
        && let Some(m) = max.as_millionths()
        && v.get() > m.get()
    {
        return as_type(max);
    }
    value.clone()
}

/// `a + b` for numbers, kept to six places: ints stay ints.
pub fn add(a: &Value, b: &Value, at: &str) -> Result<Value, ChangeError> {
    match ocf_formula::arith::apply(ocf_formula::arith::NumberOp::Add, a, b) {
        Some(Ok(v)) => Ok(v),
        Some(Err(_)) => Err(ChangeError::new(
            "arithmetic-overflow",
            at,
            "the sum is out of range",
        )),
        None => Err(type_mismatch(at, "a number", b)),
    }
}

/// A number's millionths, for comparing.
pub fn millionths(v: &Value) -> i128 {
    v.as_millionths().map_or(0, Millionths::get)
}
