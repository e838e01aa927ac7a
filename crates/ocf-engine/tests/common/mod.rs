//! Test support: a ruleset of one pack `t` written compactly in YAML (declarations get `declaredIn: t`),
//! and characters written without the boilerplate.

#![allow(dead_code)]

use ocf_engine::{CharacterId, Session};
use ocf_model::{Character, Ruleset};
use serde_json::{Value, json};

/// A ruleset from the `Ruleset` JSON shape in YAML, for the single pack `t`: every declaration in
/// `fields`, `contentTypes`, `content`, `choices`, and every entry of `effects` and `immuneTo`,
/// gets `declaredIn: t`.
pub fn ruleset(yaml: &str) -> Ruleset {
    let mut doc: Value = serde_yaml::from_str(yaml).expect("test ruleset YAML");
    let obj = doc.as_object_mut().expect("a map");
    for key in ["fields", "contentTypes", "content", "choices"] {
        if let Some(Value::Object(m)) = obj.get_mut(key) {
            for (_, decl) in m.iter_mut() {
                decl.as_object_mut()
                    .unwrap()
                    .entry("declaredIn")
                    .or_insert(json!("t"));
            }
        }
    }
    for key in ["effects", "immuneTo"] {
        if let Some(Value::Array(list)) = obj.get_mut(key) {
            for decl in list {
                decl.as_object_mut()
                    .unwrap()
                    .entry("declaredIn")
                    .or_insert(json!("t"));
            }
        }
    }
    obj.insert(
        "packs".into(),
        json!([{ "id": "t", "version": "1.0.0", "specVersion": "1.0.0", "scope": ["t"] }]),
    );
    serde_json::from_value(doc).expect("a ruleset")
}

/// A character from YAML, `id` and `specVersion` filled in.
pub fn character(yaml: &str) -> Character {
    let mut doc: Value = serde_yaml::from_str(yaml).expect("test character YAML");
    if doc.is_null() {
        doc = json!({});
    }
    let obj = doc.as_object_mut().expect("a map");
    obj.entry("id").or_insert(json!("pc"));
    obj.entry("specVersion").or_insert(json!("1.0.0"));
    serde_json::from_value(doc).expect("a character")
}

pub fn open(rules: &str, pc: &str) -> (Session, CharacterId) {
    let mut session = Session::with_execution_log(ruleset(rules));
    let id = session.open(&character(pc), &[]);
    (session, id)
}

/// `field: value` for each field, or `field: !error code`, one per line, in field order.
pub fn values(session: &Session, id: CharacterId) -> String {
    let sheet = session.sheet_json(id).unwrap();
    let mut out = String::new();
    for (field, v) in sheet["values"].as_object().unwrap() {
        match (&v["value"], &v["error"]) {
            (_, Value::String(code)) => out.push_str(&format!("{field} = error {code}\n")),
            (value, _) => out.push_str(&format!("{field} = {value}\n")),
        }
    }
    out
}

/// The field values (and other queries) that ran, one per line, sorted.
pub fn executed(session: &Session) -> String {
    let mut lines = session.take_executed();
    lines.sort();
    lines.join("\n")
}

/// Only the `field_value` executions, sorted.
pub fn executed_fields(session: &Session) -> String {
    let mut lines: Vec<String> = session
        .take_executed()
        .into_iter()
        .filter(|l| l.starts_with("field_value("))
        .collect();
    lines.sort();
    lines.join("\n")
}
