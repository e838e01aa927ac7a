//! What an edit changed, as pushed to subscribers and answered to the writer: the fields whose
//! values changed (their new value objects, as computeSheet gives them), the fields gone, and each
//! other part of the sheet (`issues`, `competing`, `effects`, ...) that changed, whole. A browser
//! tab re-renders just these.

use ocf_engine::SheetChanges;
use serde_json::{Map, Value, json};

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Changes {
    pub values: Map<String, Value>,
    pub removed: Vec<String>,
    pub parts: Map<String, Value>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.removed.is_empty() && self.parts.is_empty()
    }

    pub fn to_json(&self) -> Value {
        json!({ "values": self.values, "removed": self.removed, "parts": self.parts })
    }
}

/// The changes from sheet `before` to sheet `after` (computeSheet outputs).
pub fn diff(before: &Value, after: &Value) -> Changes {
    let values = |sheet: &Value| sheet.get("values").and_then(Value::as_object).cloned();
    let old = values(before).unwrap_or_default();
    let new = values(after).unwrap_or_default();
    let mut changes = Changes::default();
    for (field, value) in &new {
        if old.get(field) != Some(value) {
            changes.values.insert(field.clone(), value.clone());
        }
    }
    changes.removed = old
        .keys()
        .filter(|field| !new.contains_key(*field))
        .cloned()
        .collect();
    let parts = |sheet: &Value| sheet.as_object().cloned().unwrap_or_default();
    let (old, new) = (parts(before), parts(after));
    for (part, value) in &new {
        if part != "values" && old.get(part) != Some(value) {
            changes.parts.insert(part.clone(), value.clone());
        }
    }
    for part in old.keys() {
        if part != "values" && !new.contains_key(part) {
            changes.parts.insert(part.clone(), Value::Null);
        }
    }
    changes
}

/// What the engine's report `changed` (what changed on the sheet since the session last reported
/// it, which `sheet` is, as JSON) changes of `sheet`, told as [`diff`] tells it, with the sheet
/// after them. Its cost follows what changed: only the reported fields and parts are made JSON and
/// compared, except for a sheet reported whole (the first report, a file whose fields changed),
/// which is diffed whole.
pub fn told(sheet: &Value, changed: &SheetChanges) -> Told {
    let mut now = changed.to_json();
    if changed.whole {
        if let Value::Object(map) = &mut now {
            map.shift_remove("whole");
        }
        return Told {
            changes: diff(sheet, &now),
            whole: Some(now),
        };
    }
    let mut changes = Changes::default();
    let old_values = sheet.get("values").and_then(Value::as_object);
    let Value::Object(patch) = now else {
        return Told {
            changes,
            whole: None,
        };
    };
    for (key, value) in patch {
        if key == "values" {
            let Value::Object(values) = value else {
                continue;
            };
            for (field, value) in values {
                if old_values.and_then(|old| old.get(&field)) != Some(&value) {
                    changes.values.insert(field, value);
                }
            }
        } else if sheet.get(&key) != Some(&value) {
            changes.parts.insert(key, value);
        }
    }
    Told {
        changes,
        whole: None,
    }
}

/// What an edit changed of the sheet last sent ([`told`]): the changes, and the sheet after them
/// when it was reported whole.
#[derive(Debug)]
pub struct Told {
    pub changes: Changes,
    whole: Option<Value>,
}

impl Told {
    /// The sheet after the changes: `sheet` patched with them (or the sheet reported whole).
    pub fn apply_to(self, sheet: &mut Value) {
        if let Some(whole) = self.whole {
            *sheet = whole;
            return;
        }
        let Value::Object(map) = sheet else {
            return;
        };
        // A report not whole names no removed field: every field of the ruleset has its entry,
        // and only a ruleset changed (a report whole) changes which fields there are.
        if let Some(Value::Object(values)) = map.get_mut("values") {
            for (field, value) in self.changes.values {
                values.insert(field, value);
            }
        }
        for (part, value) in self.changes.parts {
            if value.is_null() {
                map.shift_remove(&part);
            } else {
                map.insert(part, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_differs_is_told() {
        let before = json!({
            "values": { "a": { "value": 1 }, "b": { "value": 2 }, "c": { "value": 3 } },
            "issues": [], "effects": []
        });
        let after = json!({
            "values": { "a": { "value": 1 }, "b": { "value": 5 } },
            "issues": [{ "code": "x" }], "effects": []
        });
        let changes = diff(&before, &after);
        expect_test::expect![[
            r#"{"parts":{"issues":[{"code":"x"}]},"removed":["c"],"values":{"b":{"value":5}}}"#
        ]]
        .assert_eq(&serde_json::to_string(&sort(changes.to_json())).unwrap());
        assert!(diff(&after, &after).is_empty());
    }

    fn sort(value: Value) -> Value {
        let text = serde_json::to_string(&value).unwrap();
        let parsed: std::collections::BTreeMap<String, Value> =
            serde_json::from_str(&text).unwrap();
        serde_json::to_value(parsed).unwrap()
    }
}
