//! Links (EC, "Links"): views of other characters filling the rules' link slots, read as
//! `links.<slot>`. They are inputs: the engine never computes the other character, and a link read
//! adds no field dependency, so links can't form a loop.

use std::sync::Arc;

use ocf_formula::Value;
use ocf_model::Namespace;
use serde_json::{Value as Json, json};

/// Declared in the query map ([`crate::db`]); kept here for the crates above.
pub use crate::db::{CharacterInput, links};

use crate::view::{bare, literal_value};

/// Every filled slot's view by qualified slot ID, and the `invalid-link-value` and `unknown-link`
/// errors.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Links {
    pub views: Vec<(String, Value)>,
    pub errors: Vec<Json>,
}

pub(crate) fn links_query(db: &dyn salsa::Database, character: CharacterInput) -> Links {
    let ruleset = character.ruleset(db).ruleset(db);
    let saved = character.saved_links(db);
    let passed = character.passed_links(db);
    let mut out = Links::default();
    // A saved link or a passed view for a slot no loaded pack declares.
    let mut named: Vec<&String> = saved.keys().chain(passed.keys()).collect();
    named.sort();
    named.dedup();
    for slot in named {
        if ruleset.links.get(slot).is_none() {
            out.errors
                .push(json!({ "code": "unknown-link", "data": { "link": slot } }));
        }
    }
    for (slot, decl) in ruleset.links.iter() {
        let view = passed.get(slot);
        let id = match (view.and_then(|v| v.get("id")), saved.get(slot)) {
            (Some(Json::String(id)), _) => id.clone(),
            (_, Some(id)) => id.clone(),
            _ if view.is_some() => String::new(),
            _ => continue,
        };
        let values = view
            .and_then(|v| v.get("values"))
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        let mut members: Vec<(String, Value)> = vec![("id".into(), Value::string(id))];
        for (field, field_decl) in decl.decl.fields.iter() {
            // The passed value whose field ID, without its pack, is the declared ID.
            let matching: Vec<&Json> = values
                .iter()
                .filter(|(k, _)| bare(k) == field)
                .map(|(_, v)| v)
                .collect();
            let value = match matching.as_slice() {
                [one] => match literal_value(one, Some(field_decl.r#type))
                    .filter(|v| fits(v, field_decl.r#type))
                {
                    Some(v) => Some(v),
                    None => {
                        out.errors.push(invalid(slot, field, field_decl.r#type));
                        None
                    }
                },
                [] => None,
                _ => {
                    out.errors.push(invalid(slot, field, field_decl.r#type));
                    None
                }
            };
            let value = value.or_else(|| {
                field_decl
                    .default
                    .as_ref()
                    .and_then(|d| literal_value(d, Some(field_decl.r#type)))
            });
            if let Some(value) = value {
                members.push((field.to_owned(), value));
            }
        }
        out.views.push((slot.to_owned(), nest(members)));
    }
    out
}

fn invalid(slot: &str, field: &str, ty: ocf_model::FieldType) -> Json {
    json!({
        "code": "invalid-link-value",
        "data": { "link": slot, "field": field, "expected": serde_json::to_value(ty).unwrap_or_default() },
    })
}

/// Whether a view's value is of the field type its slot or role declares (links here, an action's
/// participants in ocf-actions: both are views `{ id, values }`).
pub fn fits(value: &Value, ty: ocf_model::FieldType) -> bool {
    use ocf_model::FieldType::*;
    matches!(
        (ty, value),
        (Integer, Value::Int(_))
            | (Decimal, Value::Decimal(_))
            | (Boolean, Value::Bool(_))
            | (String | Enum | Id, Value::String(_))
            | (Set, Value::List(_))
            | (Dice, Value::Dice(_))
    )
}

/// Nests `a.b.c` members at their dots: `{ a: { b: { c } } }`; a view as formulas read it.
pub fn nest<S: AsRef<str>>(members: impl IntoIterator<Item = (S, Value)>) -> Value {
    let mut members: Vec<(S, Value)> = members.into_iter().collect();
    // A map's members are kept in name order, each insert into the middle of its vector: many
    // members (a pack may declare any number of fields) go in the order of their segments,
    // each then at its map's end. Stable: a path given twice keeps its last value.
    if members.len() > 32 {
        members.sort_by(|a, b| a.0.as_ref().split('.').cmp(b.0.as_ref().split('.')));
    }
    let mut root = ocf_formula::value::Map::with_capacity(members.len());
    for (path, value) in members {
        insert(&mut root, path.as_ref(), value);
    }
    Value::Map(Arc::new(root))
}

/// Inserts `value` at the dotted `path` of `map`, making the maps on the way that aren't there.
fn insert(map: &mut ocf_formula::value::Map, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            map.insert(ocf_formula::value::key(path), value);
        }
        Some((head, rest)) => {
            let inner = map.get_or_insert_with(
                head,
                || ocf_formula::value::key(head),
                || Value::Map(Arc::new(Default::default())),
            );
            if let Value::Map(inner) = inner {
                insert(Arc::make_mut(inner), rest, value);
            }
        }
    }
}

/// `links` as a formula in `pack` sees it: each filled slot visible from the pack, by its name.
pub fn links_root(db: &dyn salsa::Database, character: CharacterInput, pack: &str) -> Value {
    let ruleset = character.ruleset(db).ruleset(db);
    let all = links(db, character);
    let mut members = Vec::new();
    for (slot, view) in &all.views {
        let name = bare(slot);
        if ruleset.resolve(pack, name, Namespace::Link).as_deref() == Some(slot.as_str())
            || !ruleset.packs.iter().any(|p| p.id == pack)
        {
            members.push((name.to_owned(), view.clone()));
        }
    }
    Value::map(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_of_many_members_in_any_order_nests_each_once() {
        // A pack may declare any number of fields, in any order: nested in one sort.
        let members: Vec<(String, Value)> = (0..50_000)
            .rev()
            .map(|i| (format!("g{}.f{i:05}", i % 7), Value::Int(i)))
            .chain([("g3.f00003".to_owned(), Value::Int(-3))])
            .collect();
        let view = nest(members);
        let Value::Map(groups) = &view else {
            panic!("not a map")
        };
        assert_eq!(groups.len(), 7);
        let Some(Value::Map(g3)) = groups.get("g3") else {
            panic!("no g3")
        };
        assert_eq!(g3.get("f00003"), Some(&Value::Int(-3)));
        assert_eq!(g3.get("f00010"), Some(&Value::Int(10)));
        let total: usize = groups
            .values()
            .map(|g| match g {
                Value::Map(m) => m.len(),
                _ => 0,
            })
            .sum();
        assert_eq!(total, 50_000);
    }
}
