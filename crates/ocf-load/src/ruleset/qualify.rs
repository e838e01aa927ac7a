//! Step 3's references (EC "Resolve content"): every position [`ocf_model::refs`] reports is
//! qualified in the pack that wrote it, then its dependencies (`unknown-reference` otherwise); choice
//! tags and `members` are checked (`unknown-tag`) and `members` give `tagOptions`; changes sent to a
//! link are checked as the linked character's ("must be qualified IDs already").
//!
//! [`Qualifier`] is the one visitor: rules declarations, content types and content items all go
//! through it, so a reference is qualified the same way wherever it stands.

use std::collections::BTreeMap;

use ocf_model::refs::{RefKind, TagRole, Visit, values_kind};
use ocf_model::{
    Change, ChangeType, EntryRef, FieldRef, Id, Keyed, Literal, Namespace, Ruleset, Tag,
};
use rustc_hash::FxHashMap;

use crate::error::LoadErrorRecord;

/// Qualifies one declaration (a rules declaration, a content type, a content item) in place.
pub struct Qualifier<'a> {
    ruleset: &'a Ruleset,
    /// The pack that declared it.
    pack: &'a str,
    /// For a content item: the pack that wrote each top-level property another pack wrote.
    origins: Option<&'a BTreeMap<String, String>>,
    /// For a content item: its content type, qualified, whose field declarations say what the
    /// item's `fields` values name.
    item_type: Option<String>,
    /// The document, for error paths.
    path: &'a str,
    errors: &'a mut Vec<LoadErrorRecord>,
    /// The tags each pack sees, found once per pack.
    tags: &'a mut FxHashMap<String, Vec<Tag>>,
    /// `tagOptions` of the declarations with `members`, by JSON pointer.
    pub tag_options: BTreeMap<String, Vec<Tag>>,
}

impl<'a> Qualifier<'a> {
    pub fn new(
        ruleset: &'a Ruleset,
        pack: &'a str,
        path: &'a str,
        errors: &'a mut Vec<LoadErrorRecord>,
        tags: &'a mut FxHashMap<String, Vec<Tag>>,
    ) -> Qualifier<'a> {
        Qualifier {
            ruleset,
            pack,
            origins: None,
            item_type: None,
            path,
            errors,
            tags,
            tag_options: BTreeMap::new(),
        }
    }

    /// A content item's: each property in the pack that wrote it, its `fields` by `item_type`'s
    /// declarations (and the template fields).
    pub fn for_item(
        mut self,
        origins: &'a BTreeMap<String, String>,
        item_type: Option<String>,
    ) -> Qualifier<'a> {
        self.origins = Some(origins);
        self.item_type = item_type;
        self
    }

    /// The pack that wrote the position at `pointer`.
    fn pack_at(&self, pointer: &str) -> &'a str {
        let Some(origins) = self.origins else {
            return self.pack;
        };
        let top = pointer
            .strip_prefix('/')
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_default();
        origins.get(top).map_or(self.pack, String::as_str)
    }

    fn unknown(&self, pack: &str, kind: RefKind, id: &str) -> LoadErrorRecord {
        let error = LoadErrorRecord::new(
            "unknown-reference",
            format!("{} `{id}` in pack `{pack}` names nothing", noun(kind)),
        )
        .at(self.path)
        .with("id", id)
        .with("pack", pack);
        // CAT: `kind` "sometimes": EA names it for situational choices.
        match kind {
            RefKind::Situational => error.with("kind", "situational"),
            _ => error,
        }
    }

    fn check_tag(&mut self, pack: &str, tag: &Tag) {
        let ruleset = self.ruleset;
        let declared = self
            .tags
            .entry(pack.to_owned())
            .or_insert_with(|| declared_tags(ruleset, pack));
        if !declared.contains(tag) {
            self.errors.push(
                LoadErrorRecord::new(
                    "unknown-tag",
                    format!("tag `{tag}` is not declared by `{pack}` or its dependencies"),
                )
                .at(self.path)
                .with("tag", tag.as_str())
                .with("pack", pack),
            );
        }
    }

    fn qualified(&mut self, pack: &str, id: &str, what: &str) {
        if !id.contains(':') {
            let error = LoadErrorRecord::new(
                "unknown-reference",
                format!(
                    "{what} `{id}` in a change sent to a link is not qualified: the linked character's IDs are written `<pack>:<id>`"
                ),
            )
            .at(self.path)
            .with("id", id)
            .with("pack", pack)
            .with("kind", "link");
            self.errors.push(error);
        }
    }
}

impl Visit for Qualifier<'_> {
    fn reference(&mut self, pointer: &str, kind: RefKind, id: &mut Id) {
        let pack = self.pack_at(pointer);
        match self.ruleset.resolve(pack, id.as_str(), namespace(kind)) {
            Some(found) => *id = Id(found),
            None => {
                let error = self.unknown(pack, kind, id.as_str());
                self.errors.push(error);
            }
        }
    }

    /// EA "Other steps", `source`: "The action is `use` if it names a rules action, else
    /// `<source>#<use>` (an action the content or its type defines)". A `use` naming no rules
    /// action is kept as written when some content item or content type defines an action of
    /// that ID; which one runs is the listing's, found when the step runs.
    fn used_action(&mut self, pointer: &str, id: &mut Id) {
        let pack = self.pack_at(pointer);
        if let Some(found) = self.ruleset.resolve(pack, id.as_str(), Namespace::Action) {
            *id = Id(found);
            return;
        }
        let defines = |actions: &[ocf_model::Action]| {
            actions
                .iter()
                .any(|a| a.r#use.is_none() && a.id.as_deref() == Some(id.as_str()))
        };
        let content = self
            .ruleset
            .content
            .iter()
            .any(|(_, e)| defines(&e.item.actions));
        let types = self
            .ruleset
            .content_types
            .iter()
            .any(|(_, t)| defines(&t.decl.actions));
        if !content && !types {
            let error = self.unknown(pack, RefKind::Action, id.as_str());
            self.errors.push(error);
        }
    }

    fn item_fields(&mut self, pointer: &str, fields: &mut Keyed<Literal>) {
        let ruleset = self.ruleset;
        let type_fields = self
            .item_type
            .as_deref()
            .and_then(|t| ruleset.content_type(t))
            .map(|t| &t.decl.fields);
        for (name, value) in fields.0.iter_mut() {
            // A content type's field, else a template field (a template's values name both).
            let kind = match type_fields.and_then(|f| f.get(name)) {
                Some(decl) => values_kind(decl.r#type, decl.of.as_ref()),
                None => ruleset
                    .template_fields
                    .get(name)
                    .and_then(|t| values_kind(t.decl.r#type, t.decl.of.as_ref())),
            };
            if let Some(kind) = kind {
                let at = format!("{pointer}/{}", name.replace('~', "~0").replace('/', "~1"));
                self.value(&at, kind, value);
            }
        }
    }

    fn tag(&mut self, pointer: &str, role: TagRole, tag: &Tag) {
        if matches!(role, TagRole::ChoiceStep | TagRole::OptionTarget) {
            let pack = self.pack_at(pointer);
            self.check_tag(pack, tag);
        }
    }

    fn members(&mut self, pointer: &str, members: &[Tag]) {
        let pack = self.pack_at(pointer);
        for tag in members {
            self.check_tag(pack, tag);
        }
        self.tag_options
            .insert(pointer.to_owned(), self.ruleset.tag_options(members));
    }

    /// Their field IDs, copy types and written `addItem` items must be qualified (`<pack>:<id>`).
    fn link_changes(&mut self, pointer: &str, changes: &[Change]) {
        let pack = self.pack_at(pointer);
        for change in changes {
            if let Some(FieldRef::Literal(field)) = &change.field {
                self.qualified(pack, field.as_str(), "field");
            }
            if let Some(copies) = &change.copies {
                self.qualified(pack, copies.r#type.as_str(), "copy type");
            }
            if change.r#type == ChangeType::AddItem
                && let Some(EntryRef::New(entry)) = &change.entry
                && let Some(item) = string_literal(entry.item.as_str())
            {
                self.qualified(pack, item, "item");
            }
        }
    }
}

fn namespace(kind: RefKind) -> Namespace {
    match kind {
        RefKind::Content => Namespace::Content,
        RefKind::ContentType => Namespace::ContentType,
        RefKind::Field => Namespace::Field,
        RefKind::Action => Namespace::Action,
        RefKind::BandSet => Namespace::Bands,
        RefKind::Situational => Namespace::Situational,
        RefKind::LinkSlot => Namespace::Link,
    }
}

/// How a message names what a reference names.
fn noun(kind: RefKind) -> &'static str {
    match kind {
        RefKind::Content => "content item",
        RefKind::ContentType => "content type",
        RefKind::Field => "field",
        RefKind::Action => "rules action",
        RefKind::BandSet => "band set",
        RefKind::Situational => "situational choice",
        RefKind::LinkSlot => "link slot",
    }
}

/// The tags `pack` and its dependencies declare, with the tags above each.
fn declared_tags(ruleset: &Ruleset, pack: &str) -> Vec<Tag> {
    let mut tags = Vec::new();
    let scope = ruleset
        .pack(pack)
        .map(|p| p.scope.clone())
        .unwrap_or_default();
    for release in &ruleset.sources {
        if scope.iter().any(|s| s == release.id.as_str()) {
            for tag in &release.rules.tags {
                super::merge::add_tag(&mut tags, tag);
            }
        }
    }
    tags
}

/// The text of a formula that is a single quoted string literal with no escapes.
fn string_literal(formula: &str) -> Option<&str> {
    let text = formula.trim();
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.contains(quote) && !inner.contains('\\')).then_some(inner)
}
