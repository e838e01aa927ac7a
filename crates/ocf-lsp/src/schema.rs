//! The YAML keys and enum values valid at a place of a document, from the JSON Schemas of
//! ocf-model's serde types (the same schemas `ocf schema` prints), walked along the path of keys
//! and list items to the cursor.

use std::sync::OnceLock;

use ocf_load::build::source::Role;
use ocf_model::{ContentFile, PackManifest, RulesDocument};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// One step of the path from the document's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Item,
}

fn generate<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

pub fn root(role: Role) -> &'static Value {
    static SCHEMAS: OnceLock<[Value; 4]> = OnceLock::new();
    let schemas = SCHEMAS.get_or_init(|| {
        [
            generate::<PackManifest>(),
            generate::<RulesDocument>(),
            generate::<ContentFile>(),
            generate::<ocf_model::text::TextFile>(),
        ]
    });
    match role {
        Role::Manifest => &schemas[0],
        Role::Rules => &schemas[1],
        Role::Content => &schemas[2],
        Role::Texts => &schemas[3],
    }
}

/// The alternatives a schema stands for: `$ref`s followed, `anyOf`/`oneOf`/`allOf` opened.
fn alternatives<'a>(root: &'a Value, schema: &'a Value, depth: usize, out: &mut Vec<&'a Value>) {
    if depth > 16 || out.len() > 64 {
        return;
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str)
        && let Some(target) = reference.strip_prefix('#').and_then(|p| root.pointer(p))
    {
        alternatives(root, target, depth + 1, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(list) = schema.get(key).and_then(Value::as_array) {
            for alt in list {
                alternatives(root, alt, depth + 1, out);
            }
        }
    }
    out.push(schema);
}

/// The schemas at the end of `path`.
pub fn at<'a>(root: &'a Value, path: &[Step]) -> Vec<&'a Value> {
    let mut current = Vec::new();
    alternatives(root, root, 0, &mut current);
    for step in path {
        let mut next = Vec::new();
        for schema in &current {
            let child = match step {
                Step::Key(key) => schema
                    .get("properties")
                    .and_then(|p| p.get(key))
                    .or_else(|| schema.get("additionalProperties").filter(|v| v.is_object())),
                Step::Item => schema.get("items").filter(|v| v.is_object()),
            };
            if let Some(child) = child {
                alternatives(root, child, 0, &mut next);
            }
        }
        current = next;
        if current.is_empty() {
            break;
        }
    }
    current
}

/// The keys the schemas declare, with their descriptions.
pub fn keys(schemas: &[&Value]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for schema in schemas {
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (key, value) in properties {
                if !out.iter().any(|(k, _)| k == key) {
                    let doc = value
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    out.push((key.clone(), doc.to_owned()));
                }
            }
        }
    }
    out
}

/// The string values the schemas allow, when they are an enumeration.
pub fn enum_values(schemas: &[&Value]) -> Vec<String> {
    let mut out = Vec::new();
    for schema in schemas {
        let mut add = |v: &Value| {
            if let Some(s) = v.as_str()
                && !out.iter().any(|o| o == s)
            {
                out.push(s.to_owned());
            }
        };
        if let Some(list) = schema.get("enum").and_then(Value::as_array) {
            list.iter().for_each(&mut add);
        }
        if let Some(value) = schema.get("const") {
            add(value);
        }
    }
    out
}

/// Whether a schema is the formula's (`ocf_model::Formula`): its value is a formula.
pub fn is_formula(schema: &Value) -> bool {
    schema
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|d| d.starts_with("A formula (docs/spec/formulas.md)"))
}

/// The description of `key` in the map at `path`.
pub fn key_doc(root: &Value, path: &[Step], key: &str) -> Option<String> {
    keys(&at(root, path))
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, doc)| doc)
        .filter(|d| !d.is_empty())
}
