//! What a formula reads: the [`Context`] trait the evaluator asks, and [`MapContext`], a context
//! held in memory and built from JSON, for the CLI and for tests.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::error::{ContextError, ErrorCode};
use crate::lowered::{ExprId, Root};
use crate::value::{JsonError, Map, Value};

/// The evaluator's view of the world. Object safe: the evaluator takes a `&dyn Context`.
///
/// Every read is lazy: the evaluator asks for a root or a field only when the formula reaches it
/// (a short-circuited operand asks for nothing), so a sheet engine can compute fields on demand and
/// record which ones a formula read. Each method answers:
/// - `Ok(Some(value))`: the value;
/// - `Ok(None)`: the name is known here but absent (an empty link slot, `self` for rules-level
///   content); `has()` of it is false and reading it is `no-such-key`;
/// - `Err(_)`: the name is not known here (`unknown-name`), or working out the value failed (a
///   field in a loop: `circular-formula`); the evaluator adds the range of the expression.
pub trait Context {
    /// The value of a context root (catalogue §1.7). `x` and `copy` inside list functions and copy
    /// aggregates, and `item` inside `sumFields`, are bound by the evaluator and never asked for.
    fn root(&self, root: Root) -> Result<Option<Value>, ContextError>;

    /// The member `name` of the root `root`, where the context can tell it without making the
    /// whole root (a copy's `self.equipped`): `None` to have the evaluator read the root.
    fn root_member(&self, root: Root, name: &str) -> Option<Result<Option<Value>, ContextError>> {
        let _ = (root, name);
        None
    }

    /// A field's value by its dotted ID as written (`abilities.str.mod`); the context resolves it
    /// in the formula's pack, then its dependencies (EC).
    fn field(&self, id: &str) -> Result<Option<Value>, ContextError>;

    /// The field expression `at` of the formula being evaluated, `id` as written: what the
    /// evaluator asks for a field the formula names. A context that resolved the formula's names
    /// when it was lowered reads the field by `at`; any other reads `id` ([`Context::field`]).
    fn field_at(&self, at: ExprId, id: &str) -> Result<Option<Value>, ContextError> {
        let _ = at;
        self.field(id)
    }

    /// The copies the copy aggregates (`countCopies`, `sumCopies`, `maxCopies`, `minCopies`) range
    /// over, each as the `copy` root sees it (`{ id, item, type, equipped, quantity, state, tags,
    /// templates, fields }`), inventory first, then features (EC).
    fn copies(&self) -> Result<Vec<Value>, ContextError> {
        Err(ContextError::unknown(
            "the copy aggregates are not available here",
        ))
    }

    /// The sheet's fields as `sumFields` sees them before reading values: `{ id, type, tags }`
    /// views in field order, `type` the field type's name (`integer`, `decimal`, ...). `sumFields`
    /// reads the value of each matching number field through [`Context::field`], by its `id`.
    fn field_views(&self) -> Result<Vec<Value>, ContextError> {
        Err(ContextError::unknown("sumFields is not available here"))
    }

    /// `fieldOf(family, value, field)`: the field `field` of the family value `value`, read in the
    /// pack that added the value (EC, Families).
    fn family_field(
        &self,
        family: &str,
        value: &str,
        field: &str,
    ) -> Result<Option<Value>, ContextError> {
        let _ = (value, field);
        Err(ContextError::unknown(format!(
            "fieldOf is not available here (family `{family}`)"
        )))
    }
}

/// A context held in memory. From JSON ([`MapContext::from_json`]), each top-level key is a root
/// by name, except:
/// - `fields`: field IDs to values (`{ "abilities.str.mod": 3 }`);
/// - `fieldTags`: field IDs to their tags, for `sumFields` (optional);
/// - `families`: `{ family: { value: { field: value } } }`, for `fieldOf` (optional).
///
/// The copy aggregates range over `character.inventory`, then `character.features`. A JSON object
/// `{ "$dice": "2d6 + 1" }` anywhere is a dice value in canonical notation.
#[derive(Debug, Clone, Default)]
pub struct MapContext {
    roots: FxHashMap<Root, Value>,
    fields: FxHashMap<Arc<str>, Value>,
    /// Field IDs in the order given, for `sumFields`.
    field_order: Vec<Arc<str>>,
    field_tags: FxHashMap<Arc<str>, Value>,
    families: Map,
}

impl MapContext {
    pub fn new() -> MapContext {
        MapContext::default()
    }

    pub fn with_root(mut self, root: Root, value: Value) -> MapContext {
        self.roots.insert(root, value);
        self
    }

    pub fn with_field(mut self, id: &str, value: Value) -> MapContext {
        let id: Arc<str> = id.into();
        if self.fields.insert(id.clone(), value).is_none() {
            self.field_order.push(id);
        }
        self
    }

    pub fn from_json(json: &serde_json::Value) -> Result<MapContext, JsonError> {
        let serde_json::Value::Object(members) = json else {
            return Err(JsonError("a context is a JSON object".into()));
        };
        let mut ctx = MapContext::new();
        for (key, value) in members {
            match key.as_str() {
                "fields" | "fieldTags" => {
                    let serde_json::Value::Object(fields) = value else {
                        return Err(JsonError(format!("`{key}` must be an object")));
                    };
                    for (id, v) in fields {
                        let v = context_value(v)?;
                        if key == "fields" {
                            ctx = ctx.with_field(id, v);
                        } else {
                            ctx.field_tags.insert(id.as_str().into(), v);
                        }
                    }
                }
                "families" => match context_value(value)? {
                    Value::Map(m) => ctx.families = (*m).clone(),
                    _ => return Err(JsonError("`families` must be an object".into())),
                },
                name => {
                    let root = Root::from_name(name).ok_or_else(|| {
                        JsonError(format!(
                            "`{name}` is not a context root, `fields` or `families`"
                        ))
                    })?;
                    ctx.roots.insert(root, context_value(value)?);
                }
            }
        }
        Ok(ctx)
    }

    /// The roots and fields the context holds, for building a matching type environment.
    pub fn roots(&self) -> impl Iterator<Item = (Root, &Value)> {
        self.roots.iter().map(|(r, v)| (*r, v))
    }

    pub fn fields(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.field_order.iter().map(|id| (&**id, &self.fields[id]))
    }
}

/// Like [`Value::from_json`], reading `{ "$dice": "notation" }` as dice.
fn context_value(json: &serde_json::Value) -> Result<Value, JsonError> {
    match json {
        serde_json::Value::Object(members) => {
            if let (1, Some(serde_json::Value::String(text))) =
                (members.len(), members.get("$dice"))
            {
                return crate::dice_from_notation(text)
                    .map(Value::dice)
                    .map_err(|e| JsonError(format!("`{text}` is not dice notation: {e}")));
            }
            let map = Map::from_entries(
                members
                    .iter()
                    .map(|(k, v)| Ok((k.as_str().into(), context_value(v)?)))
                    .collect::<Result<_, JsonError>>()?,
            );
            Ok(Value::Map(Arc::new(map)))
        }
        serde_json::Value::Array(items) => Ok(Value::list(
            items.iter().map(context_value).collect::<Result<_, _>>()?,
        )),
        other => Value::from_json(other),
    }
}

fn field_type_name(value: &Value) -> &'static str {
    match value {
        Value::Int(_) => "integer",
        Value::Decimal(_) => "decimal",
        Value::Bool(_) => "boolean",
        Value::List(_) => "set",
        Value::Dice(_) => "dice",
        _ => "string",
    }
}

impl Context for MapContext {
    fn root(&self, root: Root) -> Result<Option<Value>, ContextError> {
        match self.roots.get(&root) {
            Some(value) => Ok(Some(value.clone())),
            None => Err(ContextError::unknown(format!("`{root}` is not bound here"))),
        }
    }

    fn field(&self, id: &str) -> Result<Option<Value>, ContextError> {
        match self.fields.get(id) {
            Some(value) => Ok(Some(value.clone())),
            None => Err(ContextError::unknown(format!("no field `{id}`"))),
        }
    }

    fn copies(&self) -> Result<Vec<Value>, ContextError> {
        let Some(Value::Map(character)) = self.roots.get(&Root::Character) else {
            return Err(ContextError::unknown("no `character` to take copies from"));
        };
        let mut copies = Vec::new();
        for key in ["inventory", "features"] {
            match character.get(key) {
                Some(Value::List(items)) => copies.extend(items.iter().cloned()),
                None => {}
                Some(other) => {
                    return Err(ContextError::new(
                        ErrorCode::TypeMismatch,
                        format!("`character.{key}` is a {}, not a list", other.type_name()),
                    ));
                }
            }
        }
        Ok(copies)
    }

    fn field_views(&self) -> Result<Vec<Value>, ContextError> {
        Ok(self
            .fields()
            .map(|(id, value)| {
                let tags = self
                    .field_tags
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| Value::list(Vec::new()));
                Value::map([
                    ("id", Value::string(id)),
                    ("type", Value::string(field_type_name(value))),
                    ("tags", tags),
                ])
            })
            .collect())
    }

    fn family_field(
        &self,
        family: &str,
        value: &str,
        field: &str,
    ) -> Result<Option<Value>, ContextError> {
        let Some(Value::Map(values)) = self.families.get(family) else {
            return Err(ContextError::unknown(format!("no family `{family}`")));
        };
        Ok(match values.get(value) {
            Some(Value::Map(fields)) => fields.get(field).cloned(),
            _ => None,
        })
    }
}
