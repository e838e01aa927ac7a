//! The receiving player's situational choices on an incoming change (EF, "Targets", incoming
//! changes: the effect's `when`, `value` and `then` see "the receiving player's situational
//! choices on the change as `situational`", and "a situational choice's own incoming-change
//! effects apply only to a change that selects it"). rules-and-fields.md#choices-on-incoming-changes
//! is lost; reconstructed (decisions.md, issue 12): an `adjust` carries `situational: { id: value }`
//! as startAction takes it, qualified or local IDs, each value checked as startAction checks it
//! (`unknown-reference` with kind `situational`, `wrong-type`, `situational-unavailable` on the
//! receiving character). A choice is selected as for rolls: a boolean when true, an integer or enum
//! when it differs from its default.

use ocf_formula::Value;
use ocf_model::{Change, FieldType, Namespace};
use serde_json::json;

use super::applier::Applier;
use super::batch::ChangeError;
use super::eval::Scope;

/// The situational values an adjust's effects see, and the choices it selects.
#[derive(Debug, Clone, Default)]
pub struct Selected {
    /// Every declared choice by local ID: given, else its default.
    pub values: Value,
    /// The qualified IDs of the selected choices, in ruleset order.
    pub selected: Vec<String>,
}

impl Applier<'_, '_> {
    pub fn situational(&self, change: &Change, path: &str) -> Result<Selected, ChangeError> {
        let mut given: Vec<(String, Value, String)> = Vec::new();
        for (id, literal) in change.situational.iter() {
            let at = format!("{path}/situational/{id}");
            let qualified = self
                .ruleset
                .resolve(&self.pack, id, Namespace::Situational)
                .or_else(|| self.ruleset.situational.get(id).map(|_| id.to_owned()))
                .or_else(|| {
                    self.ruleset
                        .packs
                        .iter()
                        .find_map(|p| self.ruleset.resolve(&p.id, id, Namespace::Situational))
                })
                .ok_or_else(|| {
                    ChangeError::new(
                        "unknown-reference",
                        &at,
                        format!("no situational choice `{id}`"),
                    )
                    .with_data(json!({ "kind": "situational", "id": id }))
                })?;
            let value = Value::from_json(literal).unwrap_or(Value::Null);
            given.retain(|(q, _, _)| *q != qualified);
            given.push((qualified, value, at));
        }
        let mut values: Vec<(String, Value)> = Vec::new();
        let mut selected = Vec::new();
        for (qualified, decl) in self.ruleset.situational.iter() {
            let local = qualified.split_once(':').map_or(qualified, |(_, l)| l);
            let ty = decl.decl.r#type;
            let default = decl
                .decl
                .default
                .as_ref()
                .and_then(|d| crate::view::literal_value(d, Some(ty)))
                .unwrap_or(match ty {
                    FieldType::Boolean => Value::Bool(false),
                    _ => Value::Null,
                });
            let (value, at) = match given.iter().find(|(q, _, _)| q == qualified) {
                Some((_, v, at)) => {
                    let fits = match (ty, v) {
                        (FieldType::Boolean, Value::Bool(_))
                        | (FieldType::Integer, Value::Int(_)) => true,
                        (FieldType::Enum, Value::String(_)) => decl.decl.values.iter().any(|l| {
                            crate::view::literal_value(l, None).is_some_and(|x| x.equals(v))
                        }),
                        _ => false,
                    };
                    if !fits {
                        return Err(ChangeError::new(
                            "wrong-type",
                            at,
                            format!("situational `{qualified}` doesn't take that value"),
                        )
                        .with_data(json!({ "target": qualified })));
                    }
                    (v.clone(), Some(at.clone()))
                }
                None => (default.clone(), None),
            };
            let is_selected = match &value {
                Value::Bool(b) => *b,
                v => !v.equals(&default),
            };
            if is_selected {
                // Availability on the receiving character, as startAction checks it on the actor.
                if let (Some(available), Some(at)) = (&decl.decl.available, &at) {
                    let scope = Scope::in_pack(decl.pack.clone());
                    if !self.eval_bool(available, &scope, at)? {
                        return Err(ChangeError::new(
                            "situational-unavailable",
                            at,
                            format!("situational `{qualified}` isn't available"),
                        )
                        .with_data(json!({ "situational": qualified })));
                    }
                }
                selected.push(qualified.to_owned());
            }
            if !values.iter().any(|(l, _)| l == local) {
                values.push((local.to_owned(), value));
            }
        }
        Ok(Selected {
            values: Value::map(values),
            selected,
        })
    }
}
