//! The sample packs (testdata/packs) and characters (testdata/characters) load: every file reads
//! into ocf-model's types, every formula in a pack parses, and every character names only content
//! and input fields its packs declare.
//!
//! This stands in for the loader until `ocf-load` can build a pack folder; then the loader's own
//! checks (references, types, loops) replace the walk below.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use ocf_model::{Character, ContentFile, PackManifest, RulesDocument, from_yaml_str};
use serde_json::Value;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Every `.yaml` file under `dir`, in path order (the order a build merges rules files in).
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `path` as the messages name it: relative to testdata/.
fn shown(path: &Path) -> String {
    let root = testdata();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> (T, Value) {
    let text = fs::read_to_string(path).unwrap();
    let name = shown(path);
    let typed = from_yaml_str(&text, &name).unwrap_or_else(|e| panic!("{e}"));
    let raw = serde_yaml::from_str(&text).unwrap();
    (typed, raw)
}

/// A pack source folder as the test sees it: its ID, declared fields and content types, its items,
/// and the raw documents to walk for formulas.
struct Pack {
    id: String,
    input_fields: BTreeSet<String>,
    fields: BTreeSet<String>,
    /// Content type name -> item field name -> declared type.
    item_field_types: BTreeMap<String, BTreeMap<String, String>>,
    template_field_types: BTreeMap<String, String>,
    /// Item ID -> (type, parent).
    items: BTreeMap<String, (Option<String>, Option<String>)>,
    rules: Vec<(PathBuf, Value)>,
    content: Vec<(PathBuf, Value)>,
}

fn load_pack(dir: &Path) -> Pack {
    let (manifest, _): (PackManifest, _) = read(&dir.join("pack.yaml"));
    let mut pack = Pack {
        id: manifest.id.to_string(),
        input_fields: BTreeSet::new(),
        fields: BTreeSet::new(),
        item_field_types: BTreeMap::new(),
        template_field_types: BTreeMap::new(),
        items: BTreeMap::new(),
        rules: Vec::new(),
        content: Vec::new(),
    };
    let rules_files = yaml_files(&dir.join("rules"));
    assert!(!rules_files.is_empty(), "{} has no rules", dir.display());
    for path in rules_files {
        let (_, raw): (RulesDocument, Value) = read(&path);
        for (id, field) in raw["fields"].as_object().into_iter().flatten() {
            pack.fields.insert(id.clone());
            if field["input"] == Value::Bool(true) {
                pack.input_fields.insert(id.clone());
            }
        }
        for (name, ty) in raw["contentTypes"].as_object().into_iter().flatten() {
            let fields = pack.item_field_types.entry(name.clone()).or_default();
            for (field, decl) in ty["fields"].as_object().into_iter().flatten() {
                fields.insert(field.clone(), decl["type"].as_str().unwrap().to_owned());
            }
        }
        for (name, decl) in raw["templateFields"].as_object().into_iter().flatten() {
            let ty = decl["type"].as_str().unwrap().to_owned();
            pack.template_field_types.insert(name.clone(), ty);
        }
        pack.rules.push((path, raw));
    }
    for path in yaml_files(&dir.join("content")) {
        let (file, raw): (ContentFile, Value) = read(&path);
        for item in file.into_items() {
            let Some(id) = item.id else { continue };
            let ty = item.r#type.map(|t| t.to_string());
            let parent = item.extends.map(|p| p.to_string());
            let previous = pack.items.insert(id.to_string(), (ty, parent));
            assert!(
                previous.is_none(),
                "{}: item {id} declared twice",
                path.display()
            );
        }
        pack.content.push((path, raw));
    }
    pack
}

fn all_packs() -> BTreeMap<String, Pack> {
    let dirs = fs::read_dir(testdata().join("packs")).unwrap();
    let mut packs = BTreeMap::new();
    for dir in dirs {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            let pack = load_pack(&dir);
            assert_eq!(
                dir.file_name().unwrap().to_str(),
                Some(pack.id.as_str()),
                "a pack folder is named after its pack ID"
            );
            packs.insert(pack.id.clone(), pack);
        }
    }
    packs
}

/// Keys whose scalar value is always a formula (formats.md).
const FORMULA_KEYS: &[&str] = &[
    "formula",
    "when",
    "check",
    "available",
    "while",
    "on",
    "becomes",
    "min",
    "max",
    "value",
    "by",
    "budget",
    "limit",
    "cost",
    "prefer",
    "slots",
    "eligible",
    "pick",
    "where",
    "forEach",
    "result",
    "dice",
    "ifEmpty",
    "below",
    "count",
    "at",
    "factor",
    "random",
    "steps",
];

/// Keys whose value is a map of name to formula (a step's `params`, a branch's `flags`, ...). A map
/// of declarations (objects) is walked like any other object.
const FORMULA_MAP_KEYS: &[&str] = &[
    "params",
    "flags",
    "data",
    "participants",
    "situational",
    "state",
];

/// Collects every formula of a pack document: `(JSON pointer, text)`.
fn collect(value: &Value, pointer: &str, parent_key: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Array(elements) => {
            for (i, element) in elements.iter().enumerate() {
                collect(element, &format!("{pointer}/{i}"), parent_key, out);
            }
        }
        Value::Object(map) => {
            let sibling = |key: &str| map.get(key).and_then(Value::as_str).unwrap_or("");
            for (key, child) in map {
                let here = format!("{pointer}/{key}");
                let is_formula = match key.as_str() {
                    // A field's or state key's `recommend` is a policy name; a choice's a formula.
                    "recommend" => !map.contains_key("type"),
                    // `split: { roll, by }` names a step and a tag.
                    "by" => parent_key != "split",
                    "item" => parent_key == "entry",
                    "field" => parent_key == "parts",
                    "source" => sibling("type") == "applyEffect" || sibling("kind") == "action",
                    "option" => matches!(sibling("type"), "choose" | "unchoose"),
                    "template" => matches!(sibling("type"), "applyTemplate" | "removeTemplate"),
                    key => FORMULA_KEYS.contains(&key),
                };
                let is_list_of_formulas = match key.as_str() {
                    "values" => sibling("kind") == "allocate",
                    "faces" => true,
                    _ => false,
                };
                if is_formula && is_scalar(child) {
                    out.push((here, scalar_text(child)));
                } else if is_list_of_formulas && child.is_array() {
                    for (i, element) in child.as_array().unwrap().iter().enumerate() {
                        out.push((format!("{here}/{i}"), scalar_text(element)));
                    }
                } else if FORMULA_MAP_KEYS.contains(&key.as_str()) && child.is_object() {
                    for (name, entry) in child.as_object().unwrap() {
                        if is_scalar(entry) {
                            out.push((format!("{here}/{name}"), scalar_text(entry)));
                        } else {
                            collect(entry, &format!("{here}/{name}"), name, out);
                        }
                    }
                } else {
                    collect(child, &here, key, out);
                }
            }
        }
        _ => {}
    }
}

fn is_scalar(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An item's content type, inherited through `extends`.
fn item_type(pack: &Pack, item: &Value) -> Option<String> {
    if let Some(ty) = item["type"].as_str() {
        return Some(ty.to_owned());
    }
    let mut parent = item["extends"].as_str().map(str::to_owned);
    for _ in 0..16 {
        let (ty, next) = pack.items.get(parent.as_deref()?)?;
        if ty.is_some() {
            return ty.clone();
        }
        parent = next.clone();
    }
    None
}

/// The formulas among an item's field values: those of `integer`, `decimal`, `boolean` and `dice`
/// fields (EC: "`integer`, `decimal`, `boolean` and `dice` fields are formulas").
fn collect_item_fields(pack: &Pack, item: &Value, pointer: &str, out: &mut Vec<(String, String)>) {
    let Some(values) = item["fields"].as_object() else {
        return;
    };
    let ty = item_type(pack, item);
    let declared = ty.as_ref().and_then(|t| pack.item_field_types.get(t));
    for (name, value) in values {
        let field_type = declared
            .and_then(|fields| fields.get(name))
            .or_else(|| pack.template_field_types.get(name))
            .unwrap_or_else(|| panic!("{pointer}: field `{name}` is not declared by type {ty:?}"));
        if matches!(
            field_type.as_str(),
            "integer" | "decimal" | "boolean" | "dice"
        ) && !value.is_null()
        {
            out.push((format!("{pointer}/fields/{name}"), scalar_text(value)));
        }
    }
}

fn pack_formulas(pack: &Pack) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, raw) in &pack.rules {
        collect(raw, &shown(path), "", &mut out);
    }
    for (path, raw) in &pack.content {
        let items = match raw {
            Value::Array(items) => items.iter().collect(),
            item => vec![item],
        };
        for (i, item) in items.into_iter().enumerate() {
            let pointer = format!("{}#{i}", shown(path));
            collect(item, &pointer, "", &mut out);
            collect_item_fields(pack, item, &pointer, &mut out);
        }
    }
    out
}

#[test]
fn every_pack_formula_parses() {
    let packs = all_packs();
    assert!(packs.contains_key("5e-srd-5.1"));
    let mut failures = Vec::new();
    for pack in packs.values() {
        let formulas = pack_formulas(pack);
        assert!(
            formulas.len() > 50,
            "{}: only {} formulas found",
            pack.id,
            formulas.len()
        );
        for (pointer, text) in formulas {
            if let Err(errors) = ocf_formula::Formula::parse(&text) {
                let messages: Vec<_> = errors.iter().map(ToString::to_string).collect();
                failures.push(format!("{pointer}: `{text}`: {}", messages.join("; ")));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "formulas that don't parse:\n{}",
        failures.join("\n")
    );
}

/// A qualified reference `pack:local` split in two.
fn split_id(id: &str) -> (&str, &str) {
    id.split_once(':')
        .unwrap_or_else(|| panic!("`{id}` is not qualified"))
}

#[test]
fn every_character_uses_only_what_its_packs_declare() {
    let packs = all_packs();
    let files = yaml_files(&testdata().join("characters"));
    assert!(
        files.len() >= 7,
        "expected the sample characters, found {}",
        files.len()
    );
    for path in files {
        let (character, _): (Character, Value) = read(&path);
        let name = shown(&path);
        let pinned: Vec<&Pack> = character
            .packs
            .iter()
            .map(|pin| {
                packs
                    .get(pin.id.as_str())
                    .unwrap_or_else(|| panic!("{name}: pins unknown pack {}", pin.id))
            })
            .collect();
        let resolve = |id: &str| pack_of(&pinned, id, &name);
        for (field, _) in character.values.iter() {
            let (pack, local) = resolve(field);
            assert!(
                pack.input_fields.contains(&local),
                "{name}: saves `{field}`, which is not an input field"
            );
        }
        let copies = character.features.iter().chain(&character.inventory);
        for copy in copies {
            let (pack, local) = resolve(copy.item.as_str());
            assert!(
                pack.items.contains_key(&local),
                "{name}: no item `{}`",
                copy.item
            );
            for template in &copy.templates {
                let (pack, local) = resolve(template.as_str());
                assert!(
                    pack.items.contains_key(&local),
                    "{name}: no template `{template}`"
                );
            }
        }
        for applied in &character.applied {
            let (pack, local) = resolve(applied.source.as_str());
            assert!(
                pack.items.contains_key(&local),
                "{name}: no item `{}`",
                applied.source
            );
        }
    }
}

fn pack_of<'a>(pinned: &[&'a Pack], id: &str, name: &str) -> (&'a Pack, String) {
    let (pack_id, local) = split_id(id);
    let pack = pinned
        .iter()
        .find(|p| p.id == pack_id)
        .unwrap_or_else(|| panic!("{name}: `{id}` names a pack the character doesn't pin"));
    (pack, local.to_owned())
}
