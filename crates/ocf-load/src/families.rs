//! Families and `viewFields` (EC, loadRuleset step 1, "Families"): the index of every loaded
//! family's values, and the expansion of a pack "not yet expanded (inline, homebrew)" with the
//! families it sees.
//!
//! The syntax (formats.md §2.7): a family is declared under `families` by bare name, as a map of value
//! ID to that value's fields; another pack adds values under the qualified family name. A key written
//! with a `{family}` placeholder (a map key anywhere in the rules and content, or the `id` of an
//! object in a list: a content item, an action, a choice) becomes one key per value the pack sees,
//! with `{family}` replaced by the value ID in the key and in every string under it. A role's or a
//! link slot's `fields` written as a name is that `viewFields` set's fields.
//!
//! Every problem is `invalid-family`, with `reason`, `pack` and what it is about (`family`, `value`,
//! `key` or `viewFields`), at the document path of the rules or the content item.

use std::borrow::Cow;

use indexmap::IndexMap;
use ocf_model::{
    Action, Family, FamilyMember, Keyed, PackRelease, RulesDocument, ViewFieldSet, ViewFields,
};
use serde_json::{Map, Value};

use crate::error::{LoadErrorRecord, content_path, rules_path};
use crate::ruleset::scope_of;

/// How many JSON nodes expansion may produce for one pack (PROVISIONAL, as all safety limits):
/// nested placeholders multiply, so a small pack could otherwise ask for billions of keys.
pub const MAX_EXPANDED_NODES: usize = 100_000;

/// Every loaded family, by qualified name, with its values in load order, and every `viewFields`
/// set by qualified name.
#[derive(Debug, Clone, Default)]
pub struct FamilyIndex {
    pub families: Keyed<Family>,
    view_fields: IndexMap<String, ViewFieldSet>,
}

/// Indexes the families and `viewFields` sets of `releases` (in load order): the declaring pack's
/// values first, then each pack's additions in load order. An addition must name a family of a pack
/// in the adder's scope, and a value ID may be given once per family.
pub fn index(releases: &[PackRelease]) -> (FamilyIndex, Vec<LoadErrorRecord>) {
    let mut index = FamilyIndex::default();
    let mut errors = Vec::new();
    for release in releases {
        let pack = release.id.as_str();
        for (name, values) in release.rules.families.iter() {
            if name.contains(':') {
                continue;
            }
            if !is_name(name) {
                errors.push(invalid(pack, "invalid-name", rules_path(pack)).with("family", name));
                continue;
            }
            let family = Family {
                declared_in: pack.to_owned(),
                values: Keyed::default(),
            };
            let qualified = format!("{pack}:{name}");
            index.families.0.insert(qualified.clone(), family);
            add_values(&mut index, &qualified, pack, values, &mut errors);
        }
        for (name, set) in release.rules.view_fields.iter() {
            index
                .view_fields
                .insert(format!("{pack}:{name}"), set.clone());
        }
    }
    for release in releases {
        let pack = release.id.as_str();
        let scope = scope_of(pack, releases);
        for (name, values) in release.rules.families.iter() {
            let Some((owner, _)) = name.split_once(':') else {
                continue;
            };
            if owner == pack {
                // Adding to one's own family under its qualified name: the values are the pack's.
                if index.families.get(name).is_some() {
                    add_values(&mut index, name, pack, values, &mut errors);
                    continue;
                }
            }
            if !scope.iter().any(|p| p == owner) || index.families.get(name).is_none() {
                errors.push(invalid(pack, "unknown-family", rules_path(pack)).with("family", name));
                continue;
            }
            add_values(&mut index, name, pack, values, &mut errors);
        }
    }
    (index, errors)
}

fn add_values(
    index: &mut FamilyIndex,
    qualified: &str,
    pack: &str,
    values: &ocf_model::FamilyDecl,
    errors: &mut Vec<LoadErrorRecord>,
) {
    let Some(family) = index.families.0.get_mut(qualified) else {
        return;
    };
    for (value, fields) in values.iter() {
        let problem = if !is_name(value) {
            Some("invalid-value")
        } else if family.values.get(value).is_some() {
            Some("duplicate-value")
        } else {
            None
        };
        if let Some(reason) = problem {
            errors.push(
                invalid(pack, reason, rules_path(pack))
                    .with("family", qualified)
                    .with("value", value),
            );
            continue;
        }
        family.values.0.insert(
            value.to_owned(),
            FamilyMember {
                declared_in: pack.to_owned(),
                fields: fields.clone(),
            },
        );
    }
}

/// A family name or value ID: letters, digits, `_`, `-` and `.`, as in IDs, so that it reads the
/// same in a key.
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

fn invalid(pack: &str, reason: &str, path: String) -> LoadErrorRecord {
    let message = match reason {
        "unknown-family" => "a family name names no family the pack sees",
        "unknown-view-fields" => "`fields` names no `viewFields` set the pack sees",
        "duplicate-value" => "a family value is given twice",
        "duplicate-key" => "an expanded key is written twice",
        "invalid-name" => "a family name must be letters, digits, `_`, `-` and `.`",
        "invalid-value" => "a family value ID must be letters, digits, `_`, `-` and `.`",
        "malformed-placeholder" => "a `{` in a key opens no `{family}` placeholder",
        "invalid-expansion" => "an expanded document no longer reads as a pack document",
        _ => "expansion would produce more than the safety limit allows",
    };
    LoadErrorRecord::new("invalid-family", format!("pack `{pack}`: {message}"))
        .at(path)
        .with("reason", reason)
        .with("pack", pack)
}

impl FamilyIndex {
    /// The family `name` as `scope`'s first pack sees it, with the values it sees: the declaring
    /// pack's, then the additions of packs in the scope, in load order.
    fn values_seen(&self, name: &str, scope: &[String]) -> Option<Vec<String>> {
        let qualified = match name.split_once(':') {
            Some((owner, _)) => scope.iter().any(|p| p == owner).then(|| name.to_owned())?,
            None => scope
                .iter()
                .map(|p| format!("{p}:{name}"))
                .find(|q| self.families.get(q).is_some())?,
        };
        let family = self.families.get(&qualified)?;
        Some(
            family
                .values
                .iter()
                .filter(|(_, m)| scope.contains(&m.declared_in))
                .map(|(v, _)| v.to_owned())
                .collect(),
        )
    }

    fn view_set(&self, name: &str, scope: &[String]) -> Option<&ViewFieldSet> {
        match name.split_once(':') {
            Some((owner, _)) => {
                if scope.iter().any(|p| p == owner) {
                    self.view_fields.get(name)
                } else {
                    None
                }
            }
            None => scope
                .iter()
                .find_map(|p| self.view_fields.get(&format!("{p}:{name}"))),
        }
    }
}

/// Expands every release with the families it sees. Releases with nothing to expand are borrowed.
pub fn expand_all<'a>(
    releases: &'a [PackRelease],
    index: &FamilyIndex,
) -> Result<Cow<'a, [PackRelease]>, Vec<LoadErrorRecord>> {
    let mut errors = Vec::new();
    let mut expanded: Vec<Option<PackRelease>> = Vec::with_capacity(releases.len());
    for release in releases {
        let scope = scope_of(release.id.as_str(), releases);
        match expand(release, &scope, index) {
            Ok(Some(r)) => expanded.push(Some(r)),
            Ok(None) => expanded.push(None),
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if expanded.iter().all(Option::is_none) {
        return Ok(Cow::Borrowed(releases));
    }
    Ok(Cow::Owned(
        expanded
            .into_iter()
            .zip(releases)
            .map(|(e, r)| e.unwrap_or_else(|| r.clone()))
            .collect(),
    ))
}

/// Expands `release` (whose names resolve in `scope`): `None` when it has nothing to expand.
pub fn expand(
    release: &PackRelease,
    scope: &[String],
    index: &FamilyIndex,
) -> Result<Option<PackRelease>, Vec<LoadErrorRecord>> {
    let pack = release.id.as_str();
    let mut errors = Vec::new();
    let mut changed = false;
    let mut out = release.clone();

    let mut rules = serde_json::to_value(&release.rules).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut rules {
        // The declarations of families and sets are not themselves expanded.
        let kept: Vec<(String, Value)> = ["families", "viewFields"]
            .iter()
            .filter_map(|k| map.remove(*k).map(|v| (k.to_string(), v)))
            .collect();
        let mut walk = Walk::new(index, scope, pack, rules_path(pack));
        walk.value(&mut rules);
        if walk.changed {
            changed = true;
            if let Value::Object(map) = &mut rules {
                map.extend(kept);
            }
            match serde_json::from_value::<RulesDocument>(rules) {
                Ok(doc) => out.rules = doc,
                Err(e) => errors.push(
                    invalid(pack, "invalid-expansion", rules_path(pack))
                        .with("detail", e.to_string()),
                ),
            }
        }
        errors.extend(walk.errors);
    }

    let mut content = Vec::with_capacity(release.content.len());
    let mut content_changed = false;
    for (i, item) in release.content.iter().enumerate() {
        let mut value = serde_json::to_value(item).unwrap_or(Value::Null);
        let mut walk = Walk::new(index, scope, pack, content_path(pack, i));
        // A content item is an object in a list: its own `id` may be a family key.
        let mut list = vec![std::mem::take(&mut value)];
        walk.list(&mut list);
        errors.extend(walk.errors);
        if walk.changed {
            content_changed = true;
        }
        for value in list {
            match serde_json::from_value(value) {
                Ok(item) => content.push(item),
                Err(e) => errors.push(
                    invalid(pack, "invalid-expansion", content_path(pack, i))
                        .with("detail", e.to_string()),
                ),
            }
        }
    }
    if content_changed {
        changed = true;
        out.content = content;
    }

    if view_fields(&mut out, scope, index, &mut errors) {
        changed = true;
    }
    if errors.is_empty() {
        Ok(changed.then_some(out))
    } else {
        Err(errors)
    }
}

/// Replaces every role's and link slot's `fields` that names a `viewFields` set with its fields.
/// Whether any did.
fn view_fields(
    release: &mut PackRelease,
    scope: &[String],
    index: &FamilyIndex,
    errors: &mut Vec<LoadErrorRecord>,
) -> bool {
    let pack = release.id.as_str().to_owned();
    let rules = rules_path(&pack);
    let mut places: Vec<(&mut ViewFields, String)> = Vec::new();
    for (_, slot) in release.rules.links.0.iter_mut() {
        places.push((&mut slot.fields, rules.clone()));
    }
    let rules_actions = roles(&mut release.rules.actions);
    places.extend(rules_actions.into_iter().map(|f| (f, rules.clone())));
    for (_, ty) in release.rules.content_types.0.iter_mut() {
        places.extend(
            roles(&mut ty.actions)
                .into_iter()
                .map(|f| (f, rules.clone())),
        );
    }
    for (i, item) in release.content.iter_mut().enumerate() {
        let path = content_path(&pack, i);
        places.extend(
            roles(&mut item.actions)
                .into_iter()
                .map(|f| (f, path.clone())),
        );
    }
    let mut changed = false;
    for (fields, path) in places {
        let Some(set) = fields.set.take() else {
            continue;
        };
        changed = true;
        match index.view_set(set.as_str(), scope) {
            Some(found) => fields.fields = found.clone(),
            None => errors
                .push(invalid(&pack, "unknown-view-fields", path).with("viewFields", set.as_str())),
        }
    }
    changed
}

/// The `fields` of every participant role of `actions`.
fn roles(actions: &mut [Action]) -> Vec<&mut ViewFields> {
    actions
        .iter_mut()
        .flat_map(|a| a.participants.0.values_mut().map(|r| &mut r.fields))
        .collect()
}

/// One pack's walk over a JSON document, expanding family keys.
struct Walk<'a> {
    index: &'a FamilyIndex,
    scope: &'a [String],
    pack: &'a str,
    path: String,
    /// JSON nodes produced so far, against [`MAX_EXPANDED_NODES`].
    produced: usize,
    changed: bool,
    errors: Vec<LoadErrorRecord>,
}

/// A key's first `{family}` placeholder: the text with braces, and the name.
enum Placeholder<'k> {
    None,
    Found(&'k str, &'k str),
    Malformed,
}

fn placeholder(key: &str) -> Placeholder<'_> {
    let Some(start) = key.find('{') else {
        return Placeholder::None;
    };
    let Some(len) = key[start..].find('}') else {
        return Placeholder::Malformed;
    };
    let whole = &key[start..start + len + 1];
    let name = &whole[1..whole.len() - 1];
    let valid = name.split(':').count() <= 2 && name.split(':').all(is_name);
    if valid {
        Placeholder::Found(whole, name)
    } else {
        Placeholder::Malformed
    }
}

impl<'a> Walk<'a> {
    fn new(index: &'a FamilyIndex, scope: &'a [String], pack: &'a str, path: String) -> Walk<'a> {
        Walk {
            index,
            scope,
            pack,
            path,
            produced: 0,
            changed: false,
            errors: Vec::new(),
        }
    }

    fn failed(&self) -> bool {
        !self.errors.is_empty()
    }

    fn value(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => self.object(map),
            Value::Array(items) => self.list(items),
            _ => {}
        }
    }

    fn object(&mut self, map: &mut Map<String, Value>) {
        let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
        let mut out = Map::new();
        for (key, value) in entries {
            for (key, mut value) in self.expand(key, value) {
                self.value(&mut value);
                if out.contains_key(&key) {
                    self.errors.push(
                        invalid(self.pack, "duplicate-key", self.path.clone()).with("key", key),
                    );
                    continue;
                }
                out.insert(key, value);
            }
        }
        *map = out;
    }

    fn list(&mut self, items: &mut Vec<Value>) {
        let mut out = Vec::with_capacity(items.len());
        for item in std::mem::take(items) {
            let key = match item.get("id") {
                Some(Value::String(id)) if id.contains('{') => id.clone(),
                _ => {
                    let mut item = item;
                    self.value(&mut item);
                    out.push(item);
                    continue;
                }
            };
            for (id, mut item) in self.expand(key, item) {
                if let Value::Object(map) = &mut item {
                    map.insert("id".to_owned(), Value::String(id));
                }
                self.value(&mut item);
                out.push(item);
            }
        }
        *items = out;
    }

    /// `key` and its value, expanded over every placeholder in the key: one pair per value of each
    /// family, in the family's order (nested placeholders left to right).
    fn expand(&mut self, key: String, value: Value) -> Vec<(String, Value)> {
        let (whole, name) = match placeholder(&key) {
            Placeholder::None => return vec![(key, value)],
            Placeholder::Malformed => {
                self.errors.push(
                    invalid(self.pack, "malformed-placeholder", self.path.clone()).with("key", key),
                );
                return Vec::new();
            }
            Placeholder::Found(whole, name) => (whole.to_owned(), name.to_owned()),
        };
        let Some(values) = self.index.values_seen(&name, self.scope) else {
            self.errors
                .push(invalid(self.pack, "unknown-family", self.path.clone()).with("family", name));
            return Vec::new();
        };
        self.changed = true;
        let size = nodes(&value);
        let mut out = Vec::new();
        for id in values {
            if self.failed() {
                break;
            }
            self.produced += size;
            if self.produced > MAX_EXPANDED_NODES {
                self.errors.push(
                    invalid(self.pack, "too-large", self.path.clone())
                        .with("family", name.as_str())
                        .with("limit", MAX_EXPANDED_NODES),
                );
                break;
            }
            let mut copy = value.clone();
            substitute(&mut copy, &whole, &id);
            out.extend(self.expand(key.replace(&whole, &id), copy));
        }
        out
    }
}

/// The nodes of a JSON value, at least one.
fn nodes(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.iter().map(|(_, v)| nodes(v)).sum::<usize>(),
        Value::Array(items) => 1 + items.iter().map(nodes).sum::<usize>(),
        _ => 1,
    }
}

/// Replaces `placeholder` with `id` in every string and key of `value`.
fn substitute(value: &mut Value, placeholder: &str, id: &str) {
    match value {
        Value::String(text) if text.contains(placeholder) => {
            *text = text.replace(placeholder, id);
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| substitute(v, placeholder, id)),
        Value::Object(map) => {
            let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            for (key, mut v) in entries {
                substitute(&mut v, placeholder, id);
                map.insert(key.replace(placeholder, id), v);
            }
        }
        _ => {}
    }
}

/// A formula context that answers `fieldOf` from a loaded ruleset for a formula of `pack`, and
/// knows no root or field: what loading itself can evaluate. An engine's context delegates
/// `family_field` to [`Ruleset::family_field`](ocf_model::Ruleset::family_field) the same way.
pub struct FamilyContext<'r> {
    pub ruleset: &'r ocf_model::Ruleset,
    pub pack: &'r str,
}

impl ocf_formula::Context for FamilyContext<'_> {
    fn root(
        &self,
        root: ocf_formula::Root,
    ) -> Result<Option<ocf_formula::Value>, ocf_formula::ContextError> {
        Err(ocf_formula::ContextError::unknown(format!(
            "`{}` is not available here",
            root.as_str()
        )))
    }

    fn field(&self, id: &str) -> Result<Option<ocf_formula::Value>, ocf_formula::ContextError> {
        Err(ocf_formula::ContextError::unknown(format!(
            "field `{id}` is not available here"
        )))
    }

    fn family_field(
        &self,
        family: &str,
        value: &str,
        field: &str,
    ) -> Result<Option<ocf_formula::Value>, ocf_formula::ContextError> {
        if self.ruleset.family(self.pack, family).is_none() {
            return Err(ocf_formula::ContextError::unknown(format!(
                "no family `{family}` in `{}` or its dependencies",
                self.pack
            )));
        }
        match self.ruleset.family_field(self.pack, family, value, field) {
            Some(literal) => ocf_formula::Value::from_json(literal)
                .map(Some)
                .map_err(|e| ocf_formula::ContextError::unknown(e.to_string())),
            None => Ok(None),
        }
    }
}
