//! Participants (EA "Starting an action" 4): each role's views, read as a link's values are.

use ocf_formula::Value;
use ocf_model::Action;
use serde_json::Value as Json;

use crate::error::ActionError;

/// The `participants` root for `def` from the app's `{ role: [{ id, values }] }`, and every view's
/// `id` seen (for `duplicate-id` across the call).
pub fn bind(def: &Action, given: &serde_json::Map<String, Json>) -> Result<Value, ActionError> {
    let invalid =
        |role: &str, why: String| ActionError::new("invalid-participants", why).with("role", role);
    for role in given.keys() {
        if def.participants.get(role).is_none() {
            return Err(invalid(
                role,
                format!("the action declares no role `{role}`"),
            ));
        }
    }
    let mut seen: Vec<String> = Vec::new();
    let mut roles: Vec<(String, Value)> = Vec::new();
    for (role, decl) in def.participants.iter() {
        let views: &[Json] = match given.get(role) {
            Some(Json::Array(list)) => list,
            Some(_) => {
                return Err(invalid(
                    role,
                    format!("role `{role}` takes a list of views"),
                ));
            }
            None => &[],
        };
        let n = views.len() as u32;
        if n < decl.min.unwrap_or(0) || decl.max.is_some_and(|max| n > max) {
            return Err(invalid(
                role,
                format!("role `{role}` has {n} participants, outside its min and max"),
            ));
        }
        let mut out = Vec::new();
        for view in views {
            let Some(id) = view.get("id").and_then(Json::as_str) else {
                return Err(invalid(
                    role,
                    "a participant's view has a string `id`".into(),
                ));
            };
            if seen.iter().any(|s| s == id) {
                return Err(ActionError::new(
                    "duplicate-id",
                    format!("the view `{id}` is given twice"),
                )
                .with("id", id));
            }
            seen.push(id.to_owned());
            let no_values = serde_json::Map::new();
            let values = view
                .get("values")
                .and_then(Json::as_object)
                .unwrap_or(&no_values);
            let mut members: Vec<(&str, Value)> = Vec::with_capacity(1 + decl.fields.len());
            members.push(("id", Value::string(id)));
            for (field, fd) in decl.fields.iter() {
                let mut matching = values
                    .iter()
                    .filter(|(k, _)| ocf_engine::view::bare(k) == field)
                    .map(|(_, v)| v);
                let matching = (matching.next(), matching.next());
                let bad = || {
                    ActionError::new(
                        "invalid-link-value",
                        format!("participant `{id}`'s `{field}` is not a valid value"),
                    )
                    .with("role", role)
                    .with("id", id)
                    .with("field", field)
                    .with(
                        "expected",
                        serde_json::to_value(fd.r#type).unwrap_or_default(),
                    )
                };
                let value = match matching {
                    (None, _) => fd
                        .default
                        .as_ref()
                        .and_then(|d| ocf_engine::view::literal_value(d, Some(fd.r#type))),
                    (Some(one), None) => Some(
                        ocf_engine::view::literal_value(one, Some(fd.r#type))
                            .filter(|v| ocf_engine::links::fits(v, fd.r#type))
                            .ok_or_else(bad)?,
                    ),
                    _ => return Err(bad()),
                };
                if let Some(value) = value {
                    members.push((field, value));
                }
            }
            out.push(ocf_engine::links::nest(members));
        }
        roles.push((role.to_owned(), Value::list(out)));
    }
    Ok(Value::map(roles))
}

/// The participants of a nested action: its roles from the IDs (or views) the step's formulas
/// give, each a participant of the running action, read from the view as the app passed it
/// (`views`, every view of the call) with the nested action's own declared fields (EA "Other
/// steps", action, participants).
pub fn nested(
    def: &Action,
    running: &Value,
    views: &[Json],
    given: Vec<(String, Value)>,
) -> Result<Value, ActionError> {
    let running_ids: Vec<&str> = match running {
        Value::Map(m) => m
            .values()
            .flat_map(|v| match v {
                Value::List(l) => l
                    .iter()
                    .filter_map(|view| match crate::context::member(view, "id") {
                        Some(Value::String(s)) => Some(s.as_ref()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut json_roles = serde_json::Map::new();
    for (role, value) in given {
        let Value::List(items) = &value else {
            return Err(ActionError::new(
                "type-mismatch",
                format!(
                    "participants `{role}` is a list of IDs, not a {}",
                    value.type_name()
                ),
            ));
        };
        let mut out = Vec::new();
        for item in items.iter() {
            let id = match item {
                Value::String(s) => s.to_string(),
                Value::Map(m) => match m.get("id") {
                    Some(Value::String(s)) => s.to_string(),
                    _ => {
                        return Err(ActionError::new(
                            "type-mismatch",
                            "a participant view has an `id`",
                        ));
                    }
                },
                other => {
                    return Err(ActionError::new(
                        "type-mismatch",
                        format!(
                            "a participant is an ID or a view, not a {}",
                            other.type_name()
                        ),
                    ));
                }
            };
            let view = views
                .iter()
                .find(|v| v.get("id").and_then(Json::as_str) == Some(id.as_str()));
            let (true, Some(view)) = (running_ids.contains(&id.as_str()), view) else {
                return Err(ActionError::new(
                    "invalid-participants",
                    format!("`{id}` is not a participant of the running action"),
                )
                .with("role", role.as_str()));
            };
            out.push(view.clone());
        }
        json_roles.insert(role, Json::Array(out));
    }
    bind(def, &json_roles)
}

/// Every view the call passes, in role order then input order: what nested actions read their
/// participants' fields from.
pub fn call_views(given: &serde_json::Map<String, Json>) -> Vec<Json> {
    given
        .values()
        .filter_map(Json::as_array)
        .flatten()
        .cloned()
        .collect()
}
