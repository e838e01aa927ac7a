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
//! `key` or `viewFields`), at the document path of the rules or the content item. Each also knows the
//! node it is about in the document as written ([`FamilyError::written`]), for the build to point
//! at the key or value an author wrote.

use std::borrow::Cow;

use indexmap::IndexMap;
use ocf_model::{
    Action, ContentItem, Family, FamilyMember, Keyed, PackRelease, RulesDocument, ViewFieldSet,
    ViewFields,
};
use rustc_hash::FxHashSet;
use serde_json::{Map, Value};

use crate::error::{LoadErrorRecord, content_path, rules_path};
use crate::formulas::escape;
use crate::ruleset::scope_of;

/// How many JSON nodes expansion may produce for one pack (PROVISIONAL, as all safety limits):
/// nested placeholders multiply, so a small pack could otherwise ask for billions of keys.
pub const MAX_EXPANDED_NODES: usize = 100_000;

/// An expansion problem: the load error, and the node it is about as written.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyError {
    pub record: LoadErrorRecord,
    pub written: WrittenNode,
}

/// The node an expansion problem is about, in the document as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenNode {
    /// A JSON pointer: for [`index`], into the pack's rules (`/families/<name>` or
    /// `/families/<name>/<value>`); for [`expand_rules`], into the rules document; for
    /// [`expand_items`], into the list of written items (`/<i>/...`). A family key is its map
    /// entry, an item's or action's `{family}` ID is its `id`, a named `viewFields` set is its
    /// `fields`. An expanded document that no longer reads is the document (or the item): no one
    /// node made it.
    pub pointer: String,
    /// Whether the problem is in the node's value (an ID, a set's name) rather than its key (a
    /// family key, a family name or value ID under `families`).
    pub value: bool,
}

impl WrittenNode {
    fn key(pointer: impl Into<String>) -> WrittenNode {
        WrittenNode {
            pointer: pointer.into(),
            value: false,
        }
    }

    fn value(pointer: impl Into<String>) -> WrittenNode {
        WrittenNode {
            pointer: pointer.into(),
            value: true,
        }
    }
}

impl FamilyError {
    fn new(record: LoadErrorRecord, written: WrittenNode) -> FamilyError {
        FamilyError { record, written }
    }
}

/// The load errors of expansion problems, as loading reports them.
pub fn records(errors: Vec<FamilyError>) -> Vec<LoadErrorRecord> {
    errors.into_iter().map(|e| e.record).collect()
}

/// Every loaded family, by qualified name, with its values in load order, and every `viewFields`
/// set by qualified name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FamilyIndex {
    pub families: Keyed<Family>,
    view_fields: IndexMap<String, ViewFieldSet>,
}

/// Indexes the families and `viewFields` sets of `releases` (in load order): the declaring pack's
/// values first, then each pack's additions in load order. An addition must name a family of a pack
/// in the adder's scope, and a value ID may be given once per family.
pub fn index(releases: &[PackRelease]) -> (FamilyIndex, Vec<FamilyError>) {
    let mut index = FamilyIndex::default();
    let mut errors = Vec::new();
    for release in releases {
        let pack = release.id.as_str();
        for (name, values) in release.rules.families.iter() {
            if name.contains(':') {
                continue;
            }
            if !is_name(name) {
                errors.push(FamilyError::new(
                    invalid(pack, "invalid-name", rules_path(pack)).about("family", name),
                    WrittenNode::key(family_pointer(name)),
                ));
                continue;
            }
            let family = Family {
                declared_in: pack.to_owned(),
                values: Keyed::default(),
            };
            let qualified = format!("{pack}:{name}");
            index.families.0.insert(qualified.clone(), family);
            add_values(&mut index, (&qualified, name), pack, values, &mut errors);
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
                    add_values(&mut index, (name, name), pack, values, &mut errors);
                    continue;
                }
            }
            if !scope.iter().any(|p| p == owner) || index.families.get(name).is_none() {
                errors.push(FamilyError::new(
                    invalid(pack, "unknown-family", rules_path(pack)).about("family", name),
                    WrittenNode::key(family_pointer(name)),
                ));
                continue;
            }
            add_values(&mut index, (name, name), pack, values, &mut errors);
        }
    }
    (index, errors)
}

/// The pointer of a family's entry under `families`, by its name as written.
fn family_pointer(written: &str) -> String {
    format!("/families/{}", escape(written))
}

/// Adds `values` to the family `qualified`, written under `families` as `written`.
fn add_values(
    index: &mut FamilyIndex,
    (qualified, written): (&str, &str),
    pack: &str,
    values: &ocf_model::FamilyDecl,
    errors: &mut Vec<FamilyError>,
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
            errors.push(FamilyError::new(
                invalid(pack, reason, rules_path(pack))
                    .about("family", qualified)
                    .about("value", value),
                WrittenNode::key(format!("{}/{}", family_pointer(written), escape(value))),
            ));
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

/// Names what an `invalid-family` error is about, in its data and its message.
trait About {
    fn about(self, key: &str, value: impl Into<String>) -> Self;
}

impl About for LoadErrorRecord {
    fn about(mut self, key: &str, value: impl Into<String>) -> LoadErrorRecord {
        let value = value.into();
        self.message.push_str(&format!(" ({key} `{value}`)"));
        self.with(key, value)
    }
}

fn invalid(pack: &str, reason: &str, path: String) -> LoadErrorRecord {
    let message = match reason {
        "unknown-family" => "a family name names no family the pack sees",
        "unknown-view-fields" => "`fields` names no `viewFields` set the pack sees",
        "duplicate-value" => "a family value is given twice",
        "duplicate-key" => "an expanded key is written twice",
        "invalid-name" => "a family name must be letters, digits, `_`, `-` and `.`",
        "invalid-value" => "a family value ID must be letters, digits, `_`, `-` and `.`",
        "malformed-placeholder" => "a `{` in a key or ID opens no `{family}` placeholder",
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

/// An expanded document, and where its expanded keys were written: pairs of (written pointer,
/// expanded pointer), so positions in the source file can follow (the build's use).
#[derive(Debug, Clone)]
pub struct Expanded<T> {
    pub value: T,
    pub renames: Vec<(String, String)>,
    /// Whether anything was expanded.
    pub changed: bool,
}

/// Where an expanded document's errors are reported, and who wrote it.
#[derive(Debug, Clone, Copy)]
pub struct Site<'a> {
    pub pack: &'a str,
    /// The pack's scope, itself first.
    pub scope: &'a [String],
    /// The document path errors carry.
    pub path: &'a str,
    /// The pack's expansion so far: one budget for all its documents and items.
    pub budget: &'a Budget,
}

/// The JSON nodes a pack's expansion has produced, against [`MAX_EXPANDED_NODES`]. Shared by
/// every document and content item of the pack, so that many items each just under the limit
/// can't add up past it (decisions.md, "Safety limit on expansion").
#[derive(Debug, Default)]
pub struct Budget(std::cell::Cell<usize>);

impl Budget {
    /// A budget of which `used` nodes are already spent: the expansion of one file after the
    /// files before it (the language server expands each file on its own).
    pub fn spent(used: usize) -> Budget {
        Budget(std::cell::Cell::new(used))
    }

    /// The nodes produced so far.
    pub fn used(&self) -> usize {
        self.0.get()
    }
}

/// Expands a rules document's family keys and named `viewFields` sets. With errors, the document
/// is expanded as far as it could be (a key that failed is left out), for the build to go on
/// checking the rest.
pub fn expand_rules(
    rules: &RulesDocument,
    site: Site<'_>,
    index: &FamilyIndex,
) -> (Expanded<RulesDocument>, Vec<FamilyError>) {
    let mut errors = Vec::new();
    let sets = rules.links.iter().any(|(_, l)| l.fields.set.is_some())
        || names_a_set(&rules.actions)
        || rules
            .content_types
            .iter()
            .any(|(_, t)| names_a_set(&t.actions));
    if !sets && !mentions_placeholder(rules) {
        return (unchanged(rules.clone()), errors);
    }
    let mut value = serde_json::to_value(rules).unwrap_or(Value::Null);
    let Value::Object(map) = &mut value else {
        return (unchanged(rules.clone()), errors);
    };
    // The declarations of families and sets are not themselves expanded.
    let kept: Vec<(String, Value)> = ["families", "viewFields"]
        .iter()
        .filter_map(|k| map.remove(*k).map(|v| (k.to_string(), v)))
        .collect();
    let mut walk = Walk::new(index, site);
    walk.value(&mut value);
    let mut out = Expanded {
        value: rules.clone(),
        renames: std::mem::take(&mut walk.renames),
        changed: walk.changed,
    };
    errors.extend(std::mem::take(&mut walk.errors));
    if out.changed {
        if let Value::Object(map) = &mut value {
            map.extend(kept);
        }
        match serde_json::from_value::<RulesDocument>(value) {
            Ok(doc) => out.value = doc,
            Err(e) => errors.push(FamilyError::new(
                invalid(site.pack, "invalid-expansion", site.path.to_owned())
                    .with("detail", e.to_string()),
                WrittenNode::value(""),
            )),
        }
    }
    let mut places: Vec<Place<'_>> = Vec::new();
    for (name, slot) in out.value.links.0.iter_mut() {
        places.push(Place {
            fields: &mut slot.fields,
            path: site.path.to_owned(),
            pointer: format!("/links/{}/fields", escape(name)),
        });
    }
    places.extend(roles(&mut out.value.actions, "/actions", site.path));
    for (name, ty) in out.value.content_types.0.iter_mut() {
        let prefix = format!("/contentTypes/{}/actions", escape(name));
        places.extend(roles(&mut ty.actions, &prefix, site.path));
    }
    out.changed |= view_fields(places, site, index, &out.renames, &mut errors);
    (out, errors)
}

/// Expands content items: an item whose `id` holds a placeholder becomes one item per value.
/// `path(i)` is the document path of the written item `i`; renames are relative to the list. With
/// errors, as [`expand_rules`].
pub fn expand_items(
    items: &[ContentItem],
    site: Site<'_>,
    path: &dyn Fn(usize) -> String,
    index: &FamilyIndex,
) -> (Expanded<Vec<ContentItem>>, Vec<FamilyError>) {
    let mut errors = Vec::new();
    if !items.iter().any(|i| names_a_set(&i.actions)) && !mentions_placeholder(&items) {
        return (unchanged(items.to_vec()), errors);
    }
    let mut out = Vec::with_capacity(items.len());
    let mut renames = Vec::new();
    let mut changed = false;
    for (i, item) in items.iter().enumerate() {
        let item_path = path(i);
        let item_site = Site {
            path: &item_path,
            ..site
        };
        let mut walk = Walk::new(index, item_site);
        walk.written = format!("/{i}");
        walk.expanded = String::new();
        walk.first_index = Some(out.len());
        let mut list = vec![serde_json::to_value(item).unwrap_or(Value::Null)];
        walk.list(&mut list);
        changed |= walk.changed;
        renames.extend(std::mem::take(&mut walk.renames));
        errors.extend(std::mem::take(&mut walk.errors));
        if !walk.changed {
            out.push(item.clone());
            continue;
        }
        for value in list {
            match serde_json::from_value(value) {
                Ok(item) => out.push(item),
                Err(e) => errors.push(FamilyError::new(
                    invalid(site.pack, "invalid-expansion", item_path.clone())
                        .with("detail", e.to_string()),
                    WrittenNode::value(format!("/{i}")),
                )),
            }
        }
    }
    let mut places: Vec<Place<'_>> = Vec::new();
    for (i, item) in out.iter_mut().enumerate() {
        places.extend(roles(&mut item.actions, &format!("/{i}/actions"), &path(i)));
    }
    changed |= view_fields(places, site, index, &renames, &mut errors);
    (
        Expanded {
            value: out,
            renames,
            changed,
        },
        errors,
    )
}

fn unchanged<T>(value: T) -> Expanded<T> {
    Expanded {
        value,
        renames: Vec::new(),
        changed: false,
    }
}

/// Whether any action of `actions` has a role whose `fields` names a set.
fn names_a_set(actions: &[Action]) -> bool {
    actions
        .iter()
        .any(|a| a.participants.iter().any(|(_, r)| r.fields.set.is_some()))
}

/// Whether `value` may hold a placeholder: a `{` inside a JSON string (a placeholder is one, in a
/// key or an `id`). A scan of the serialised text is much cheaper than expanding a document that
/// has nothing to expand, as most are.
fn mentions_placeholder<T: serde::Serialize>(value: &T) -> bool {
    let text = serde_json::to_string(value).unwrap_or_default();
    let bytes = text.as_bytes();
    // Outside strings a `{` follows `":` (a key's end), `[` or `,` (serde_json writes no spaces);
    // inside one, anything else.
    let structural = |i: usize| match bytes[i - 1] {
        b'[' | b',' => true,
        b':' => i >= 2 && bytes[i - 2] == b'"',
        _ => false,
    };
    bytes
        .iter()
        .enumerate()
        .any(|(i, &b)| b == b'{' && i > 0 && !structural(i))
}

/// Expands `release` (whose names resolve in `scope`): `None` when it has nothing to expand.
pub fn expand(
    release: &PackRelease,
    scope: &[String],
    index: &FamilyIndex,
) -> Result<Option<PackRelease>, Vec<LoadErrorRecord>> {
    // Most packs have nothing to expand: tell without copying them.
    let rules = &release.rules;
    let sets = rules.links.iter().any(|(_, l)| l.fields.set.is_some())
        || names_a_set(&rules.actions)
        || rules
            .content_types
            .iter()
            .any(|(_, t)| names_a_set(&t.actions))
        || release.content.iter().any(|i| names_a_set(&i.actions));
    if !sets && !mentions_placeholder(&(rules, &release.content)) {
        return Ok(None);
    }
    let pack = release.id.as_str();
    let rules_path = rules_path(pack);
    let budget = Budget::default();
    let site = Site {
        pack,
        scope,
        path: &rules_path,
        budget: &budget,
    };
    let (rules, mut errors) = expand_rules(&release.rules, site, index);
    let (content, content_errors) =
        expand_items(&release.content, site, &|i| content_path(pack, i), index);
    errors.extend(content_errors);
    if !errors.is_empty() {
        return Err(records(errors));
    }
    Ok((rules.changed || content.changed).then(|| PackRelease {
        rules: rules.value,
        content: content.value,
        ..release.clone()
    }))
}

/// A `fields` of the expanded document: the document path its errors carry, and its pointer.
struct Place<'a> {
    fields: &'a mut ViewFields,
    path: String,
    pointer: String,
}

/// Replaces each `fields` that names a `viewFields` set with the set's fields; whether any did.
/// `renames` lead an expanded pointer back to where it was written.
fn view_fields(
    places: Vec<Place<'_>>,
    site: Site<'_>,
    index: &FamilyIndex,
    renames: &[(String, String)],
    errors: &mut Vec<FamilyError>,
) -> bool {
    let mut changed = false;
    for place in places {
        let Some(set) = place.fields.set.take() else {
            continue;
        };
        changed = true;
        match index.view_set(set.as_str(), site.scope) {
            Some(found) => place.fields.fields = found.clone(),
            None => errors.push(FamilyError::new(
                invalid(site.pack, "unknown-view-fields", place.path)
                    .about("viewFields", set.as_str()),
                WrittenNode::value(written_pointer(&place.pointer, renames)),
            )),
        }
    }
    changed
}

/// The pointer, as written, of the node at `expanded`: the deepest rename whose expanded pointer
/// holds it gives its written prefix. A node with no rename above it was written where it is.
fn written_pointer(expanded: &str, renames: &[(String, String)]) -> String {
    let holds = |prefix: &str| {
        expanded.starts_with(prefix)
            && (expanded.len() == prefix.len() || expanded[prefix.len()..].starts_with('/'))
    };
    renames
        .iter()
        .filter(|(_, to)| holds(to))
        .max_by_key(|(_, to)| to.len())
        .map_or_else(
            || expanded.to_owned(),
            |(written, to)| format!("{written}{}", &expanded[to.len()..]),
        )
}

/// The `fields` of every participant role of `actions`, at `prefix` (the list's pointer), their
/// errors carrying `path`.
fn roles<'a>(actions: &'a mut [Action], prefix: &str, path: &str) -> Vec<Place<'a>> {
    actions
        .iter_mut()
        .enumerate()
        .flat_map(|(i, a)| {
            a.participants.0.iter_mut().map(move |(role, r)| Place {
                fields: &mut r.fields,
                path: path.to_owned(),
                pointer: format!("{prefix}/{i}/participants/{}/fields", escape(role)),
            })
        })
        .collect()
}

/// One pack's walk over a JSON document, expanding family keys.
struct Walk<'a> {
    index: &'a FamilyIndex,
    scope: &'a [String],
    pack: &'a str,
    path: String,
    /// The pack's JSON nodes produced so far, against [`MAX_EXPANDED_NODES`].
    budget: &'a Budget,
    /// Whether the limit was passed: nothing more is expanded (other problems are still found).
    too_large: bool,
    changed: bool,
    errors: Vec<FamilyError>,
    /// The written pointer and message of each problem reported.
    reported: FxHashSet<(String, String)>,
    /// The pointer of the current node as written, and as expanded.
    written: String,
    expanded: String,
    /// Where the next element of the outermost list lands, when it is a file's content items
    /// (they expand into one list shared by every item); `None` for every other list.
    first_index: Option<usize>,
    renames: Vec<(String, String)>,
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
    fn new(index: &'a FamilyIndex, site: Site<'a>) -> Walk<'a> {
        Walk {
            index,
            scope: site.scope,
            pack: site.pack,
            path: site.path.to_owned(),
            budget: site.budget,
            too_large: false,
            changed: false,
            errors: Vec::new(),
            reported: FxHashSet::default(),
            written: String::new(),
            expanded: String::new(),
            first_index: None,
            renames: Vec::new(),
        }
    }

    /// Walks `value` at `written` / `expanded` (pointer segments), recording a rename when they
    /// differ.
    fn at(&mut self, written: &str, expanded: &str, value: &mut Value) {
        let (w, e) = (self.written.len(), self.expanded.len());
        self.written.push('/');
        self.written.push_str(&escape(written));
        self.expanded.push('/');
        self.expanded.push_str(&escape(expanded));
        // Under a renamed node the position index copies the whole subtree, so only the nodes
        // whose own segment changed need a rename.
        if written != expanded {
            self.renames
                .push((self.written.clone(), self.expanded.clone()));
        }
        self.value(value);
        self.written.truncate(w);
        self.expanded.truncate(e);
    }

    /// An `invalid-family` problem for `reason`, about the node written at `pointer`.
    /// A node inside an expanded entry is walked once per copy; its problem is reported once
    /// (`None` when it already was).
    fn error(
        &mut self,
        reason: &str,
        at: &WrittenNode,
        about: (&str, &str),
    ) -> Option<&mut FamilyError> {
        let record = invalid(self.pack, reason, self.path.clone()).about(about.0, about.1);
        if !self
            .reported
            .insert((at.pointer.clone(), record.message.clone()))
        {
            return None;
        }
        self.errors.push(FamilyError::new(record, at.clone()));
        self.errors.last_mut()
    }

    /// The pointer, as written, of the current node's child `segment`.
    fn written_child(&self, segment: &str) -> String {
        format!("{}/{}", self.written, escape(segment))
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
        for (written, value) in entries {
            // The family key's entry: where its problems and its expanded keys' are.
            let at = WrittenNode::key(self.written_child(&written));
            for (key, mut value) in self.expand(written.clone(), value, &at) {
                self.at(&written, &key, &mut value);
                if out.contains_key(&key) {
                    self.error("duplicate-key", &at, ("key", &key));
                    continue;
                }
                out.insert(key, value);
            }
        }
        *map = out;
    }

    fn list(&mut self, items: &mut Vec<Value>) {
        // Only the outermost list of content items is placed in the shared list: later lists are
        // inside an item.
        let outer = self.first_index.take();
        let first = outer.unwrap_or(0);
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in std::mem::take(items).into_iter().enumerate() {
            let written = match outer {
                None => i.to_string(),
                // The items' caller set `written` to the item's own pointer.
                Some(_) => String::new(),
            };
            let key = match item.get("id") {
                Some(Value::String(id)) if id.contains('{') => id.clone(),
                _ => {
                    let mut item = item;
                    let expanded = (first + out.len()).to_string();
                    self.list_element(&written, &expanded, &mut item);
                    out.push(item);
                    continue;
                }
            };
            // A `{family}` ID is its item's `id`: the item's own pointer for the outermost
            // content list, else its index in this list.
            let at = WrittenNode::value(match outer {
                None => format!("{}/{i}/id", self.written),
                Some(_) => format!("{}/id", self.written),
            });
            for (id, mut item) in self.expand(key, item, &at) {
                if let Value::Object(map) = &mut item {
                    map.insert("id".to_owned(), Value::String(id));
                }
                let expanded = (first + out.len()).to_string();
                self.list_element(&written, &expanded, &mut item);
                out.push(item);
            }
        }
        *items = out;
    }

    /// A list element: at `written` / `expanded` indexes, or for the outermost content list
    /// (`written` empty) at the item's own written pointer.
    fn list_element(&mut self, written: &str, expanded: &str, item: &mut Value) {
        if !written.is_empty() {
            self.at(written, expanded, item);
            return;
        }
        let e = self.expanded.len();
        self.expanded.push('/');
        self.expanded.push_str(expanded);
        if self.written != self.expanded {
            self.renames
                .push((self.written.clone(), self.expanded.clone()));
        }
        self.value(item);
        self.expanded.truncate(e);
    }

    /// `key` and its value, expanded over every placeholder in the key: one pair per value of each
    /// family, in the family's order (nested placeholders left to right). Problems are about the
    /// node written `at` (the family key's entry, or the `id` holding it).
    fn expand(&mut self, key: String, value: Value, at: &WrittenNode) -> Vec<(String, Value)> {
        let (whole, name) = match placeholder(&key) {
            Placeholder::None => return vec![(key, value)],
            Placeholder::Malformed => {
                self.error("malformed-placeholder", at, ("key", &key));
                return Vec::new();
            }
            Placeholder::Found(whole, name) => (whole.to_owned(), name.to_owned()),
        };
        let Some(values) = self.index.values_seen(&name, self.scope) else {
            self.error("unknown-family", at, ("family", &name));
            return Vec::new();
        };
        self.changed = true;
        let size = nodes(&value);
        let mut out = Vec::new();
        for id in values {
            if self.too_large {
                break;
            }
            let produced = self.budget.0.get().saturating_add(size);
            self.budget.0.set(produced);
            if produced > MAX_EXPANDED_NODES {
                self.too_large = true;
                if let Some(error) = self.error("too-large", at, ("family", &name)) {
                    let limit = MAX_EXPANDED_NODES.into();
                    error.record.data.insert("limit".to_owned(), limit);
                }
                break;
            }
            let mut copy = value.clone();
            substitute(&mut copy, &whole, &id);
            out.extend(self.expand(key.replace(&whole, &id), copy, at));
        }
        if self.too_large {
            // A key that fails is left out whole: what it had produced is dropped, not checked.
            return Vec::new();
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

#[cfg(test)]
mod tests {
    use super::written_pointer;

    #[test]
    fn expanded_pointers_lead_back_to_where_they_were_written() {
        let renames = [
            ("/a.{x}".to_owned(), "/a.1".to_owned()),
            ("/a.{x}/b.{y}".to_owned(), "/a.1/b.2".to_owned()),
            ("/1".to_owned(), "/3".to_owned()),
        ];
        let cases = [
            // The deepest rename holding the pointer gives its written prefix.
            ("/a.1/b.2/fields", "/a.{x}/b.{y}/fields"),
            ("/a.1/c/fields", "/a.{x}/c/fields"),
            ("/3/actions/0", "/1/actions/0"),
            // A prefix of a segment is not a parent: `/a.10` is not under `/a.1`.
            ("/a.10/fields", "/a.10/fields"),
            ("/30", "/30"),
            // Nothing renamed above it: written where it is.
            ("/links/x/fields", "/links/x/fields"),
        ];
        for (expanded, written) in cases {
            assert_eq!(written_pointer(expanded, &renames), written, "{expanded}");
        }
    }
}
