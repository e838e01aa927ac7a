//! Where the model holds references: the one table of positions that hold an ID (a content ID, a field
//! ID, a type name, an action, a band set, a situational choice, a link slot), a tag, or a literal
//! naming IDs, as a walk over the model types.
//!
//! EC loadRuleset: "After loading, every content ID, type name, field ID and action ID in the ruleset is
//! qualified." The loader qualifies by visiting what this walk reports; nothing else needs to know
//! where in the format a reference may stand, so a position added here is qualified everywhere it
//! occurs (a rules effect, a content type's, an item's, a choice's, a situational choice's).
//!
//! The walk is mutable: a visitor rewrites each ID in place. Each report carries the JSON pointer of the
//! position, relative to where the walk started (a content item, a content type, a rules declaration):
//! the loader reads a content item's top-level property from it (which pack wrote it) and keys
//! `tagOptions` by it.

use crate::{
    Action, Change, Choice, ChoiceOptions, ChoiceSource, Computed, ContentItem, ContentTypeDecl,
    CreationStart, Destination, DisplayGroup, Effect, EffectValue, EntryRef, FieldDecl, FieldHint,
    FieldRef, FieldType, FollowUp, Grant, GrantValue, Id, Immunity, ItemFieldDecl, Keyed, Literal,
    OddsHint, ParamEntry, Query, Results, SituationalDecl, StateDecl, Step, StepOptions,
    StepSource, Tag, TagEntry, Target, rules::Constraint,
};

/// What a reference names, so where it resolves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefKind {
    Content,
    ContentType,
    Field,
    Action,
    BandSet,
    Situational,
    LinkSlot,
}

/// Why a tag stands where it does: EC checks the tags of a choice step's `tags` and of an `option`
/// effect's `{ choices }` target at load ("Other tags are checked by the build only").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TagRole {
    ChoiceStep,
    OptionTarget,
    Other,
}

/// What the walk reports. `pointer` is the position's JSON pointer from where the walk started.
pub trait Visit {
    /// `id` names a `kind`; the visitor may rewrite it.
    fn reference(&mut self, pointer: &str, kind: RefKind, id: &mut Id);

    /// A literal value of an `id` or `set` declaration whose `of` is `field` or a content type: a
    /// string, or a list of strings, each naming a `kind`. Anything else is left alone (the value's
    /// type is checked elsewhere).
    fn value(&mut self, pointer: &str, kind: RefKind, value: &mut Literal) {
        let mut one = |pointer: &str, text: &mut String| {
            let mut id = Id(std::mem::take(text));
            self.reference(pointer, kind, &mut id);
            *text = id.0;
        };
        match value {
            Literal::String(text) => one(pointer, text),
            Literal::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    if let Literal::String(text) = item {
                        one(&format!("{pointer}/{index}"), text);
                    }
                }
            }
            _ => {}
        }
    }

    /// A content item's (or template's) `fields`: what each value names depends on the declaration
    /// of its content type or template field, which the visitor knows and the model does not. The
    /// visitor calls [`Visit::value`] for each that names IDs ([`values_kind`]).
    fn item_fields(&mut self, pointer: &str, fields: &mut Keyed<Literal>);

    fn tag(&mut self, _pointer: &str, _role: TagRole, _tag: &Tag) {}

    /// A declaration with `members` (a field, an item field, a state key, a parameter), at `pointer`.
    fn members(&mut self, _pointer: &str, _members: &[Tag]) {}

    /// Changes sent to a link: they are the linked character's, kept as written.
    fn link_changes(&mut self, _pointer: &str, _changes: &[Change]) {}

    /// An action step's `use` beside `source` or `entry`: a rules action, else the local ID of an
    /// action content or its type defines, run as `<source>#<use>` (EA "Other steps", `source`).
    /// By default it is visited as a rules action.
    fn used_action(&mut self, pointer: &str, id: &mut Id) {
        self.reference(pointer, RefKind::Action, id);
    }
}

/// What the values of a declaration of `ty` with `of` name: `id` and `set` values of `field` are
/// field IDs, of a content type content IDs; others name nothing.
pub fn values_kind(ty: FieldType, of: Option<&Id>) -> Option<RefKind> {
    match (ty, of) {
        (FieldType::Id | FieldType::Set, Some(of)) if of.as_str() == "field" => {
            Some(RefKind::Field)
        }
        (FieldType::Id | FieldType::Set, Some(_)) => Some(RefKind::Content),
        _ => None,
    }
}

/// A step of a JSON pointer, written onto the pointer in place: the walk visits every node of every
/// declaration, so it allocates nothing per step.
trait Segment {
    fn push_to(&self, pointer: &mut String);
}

impl Segment for &str {
    fn push_to(&self, pointer: &mut String) {
        for c in self.chars() {
            match c {
                '~' => pointer.push_str("~0"),
                '/' => pointer.push_str("~1"),
                c => pointer.push(c),
            }
        }
    }
}

impl Segment for &String {
    fn push_to(&self, pointer: &mut String) {
        self.as_str().push_to(pointer);
    }
}

impl Segment for usize {
    fn push_to(&self, pointer: &mut String) {
        use std::fmt::Write as _;
        let _ = write!(pointer, "{self}");
    }
}

/// The walk: the pointer so far and the visitor.
pub struct Walk<'v> {
    pointer: String,
    visit: &'v mut dyn Visit,
}

impl<'v> Walk<'v> {
    pub fn new(visit: &'v mut dyn Visit) -> Walk<'v> {
        Walk {
            pointer: String::new(),
            visit,
        }
    }

    fn at<R>(&mut self, segment: impl Segment, f: impl FnOnce(&mut Walk<'v>) -> R) -> R {
        let len = self.pointer.len();
        self.pointer.push('/');
        segment.push_to(&mut self.pointer);
        let out = f(self);
        self.pointer.truncate(len);
        out
    }

    fn list<T>(&mut self, key: &str, items: &mut [T], mut f: impl FnMut(&mut Walk<'v>, &mut T)) {
        if items.is_empty() {
            return;
        }
        self.at(key, |w| {
            for (index, item) in items.iter_mut().enumerate() {
                w.at(index, |w| f(w, item));
            }
        });
    }

    fn keyed<T>(
        &mut self,
        key: &str,
        items: &mut Keyed<T>,
        mut f: impl FnMut(&mut Walk<'v>, &mut T),
    ) {
        if items.is_empty() {
            return;
        }
        self.at(key, |w| {
            for (name, item) in items.0.iter_mut() {
                w.at(name, |w| f(w, item));
            }
        });
    }

    // Leaves.

    fn reference_here(&mut self, kind: RefKind, id: &mut Id) {
        self.visit.reference(&self.pointer, kind, id);
    }

    fn reference(&mut self, key: &str, kind: RefKind, id: &mut Id) {
        self.at(key, |w| w.reference_here(kind, id));
    }

    fn optional(&mut self, key: &str, kind: RefKind, id: &mut Option<Id>) {
        if let Some(id) = id {
            self.reference(key, kind, id);
        }
    }

    fn references(&mut self, key: &str, kind: RefKind, ids: &mut [Id]) {
        self.list(key, ids, |w, id| w.reference_here(kind, id));
    }

    /// An `of`: `field`, or a content type.
    fn of(&mut self, of: &mut Option<Id>) {
        if let Some(of) = of
            && of.as_str() != "field"
        {
            self.reference("of", RefKind::ContentType, of);
        }
    }

    /// A declaration's `default`, when its values name IDs.
    fn default(&mut self, ty: FieldType, of: &Option<Id>, default: &mut Option<Literal>) {
        if let (Some(kind), Some(default)) = (values_kind(ty, of.as_ref()), default) {
            self.at("default", |w| w.visit.value(&w.pointer, kind, default));
        }
    }

    fn tags(&mut self, key: &str, role: TagRole, tags: &[Tag]) {
        if tags.is_empty() {
            return;
        }
        self.at(key, |w| {
            for (index, tag) in tags.iter().enumerate() {
                w.at(index, |w| w.visit.tag(&w.pointer, role, tag));
            }
        });
    }

    /// Written tags and `{ formula }` entries; only the written ones are tags.
    fn tag_entries(&mut self, key: &str, role: TagRole, entries: &[TagEntry]) {
        if entries.is_empty() {
            return;
        }
        self.at(key, |w| {
            for (index, entry) in entries.iter().enumerate() {
                if let Computed::Literal(tag) = entry {
                    w.at(index, |w| w.visit.tag(&w.pointer, role, tag));
                }
            }
        });
    }

    fn members(&mut self, members: &[Tag]) {
        if !members.is_empty() {
            self.visit.members(&self.pointer, members);
            self.tags("members", TagRole::Other, members);
        }
    }

    fn query(&mut self, key: &str, query: &mut Query) {
        self.at(key, |w| {
            w.reference("type", RefKind::ContentType, &mut query.r#type)
        });
    }

    // Declarations.

    pub fn field(&mut self, field: &mut FieldDecl) {
        self.of(&mut field.of);
        self.default(field.r#type, &field.of, &mut field.default);
        self.tag_entries("tags", TagRole::Other, &field.tags);
        self.members(&field.members);
        self.optional("nameFrom", RefKind::Field, &mut field.name_from);
    }

    pub fn item_field(&mut self, field: &mut ItemFieldDecl) {
        self.of(&mut field.of);
        self.default(field.r#type, &field.of, &mut field.default);
        self.members(&field.members);
    }

    fn state(&mut self, state: &mut StateDecl) {
        self.of(&mut state.of);
        if let (Some(kind), Some(Computed::Literal(default))) = (
            values_kind(state.r#type, state.of.as_ref()),
            &mut state.default,
        ) {
            self.at("default", |w| w.visit.value(&w.pointer, kind, default));
        }
        self.members(&state.members);
    }

    pub fn content_type(&mut self, ty: &mut ContentTypeDecl) {
        self.keyed("fields", &mut ty.fields, Walk::item_field);
        self.keyed("state", &mut ty.state, Walk::state);
        self.list("effects", &mut ty.effects, Walk::shared_effect);
        self.list("grants", &mut ty.grants, Walk::grant);
        self.list("actions", &mut ty.actions, Walk::action);
        self.list("followUps", &mut ty.follow_ups, Walk::follow_up);
    }

    pub fn situational(&mut self, decl: &mut SituationalDecl) {
        self.list("effects", &mut decl.effects, Walk::shared_effect);
    }

    pub fn constraint(&mut self, constraint: &mut Constraint) {
        if let Some(query) = &mut constraint.copies {
            self.query("copies", query);
        }
    }

    pub fn creation_start(&mut self, start: &mut CreationStart) {
        self.reference("action", RefKind::Action, &mut start.action);
    }

    pub fn display_group(&mut self, group: &mut DisplayGroup) {
        self.optional("type", RefKind::ContentType, &mut group.r#type);
    }

    pub fn field_hint(&mut self, hint: &mut FieldHint) {
        self.reference("field", RefKind::Field, &mut hint.field);
        self.optional("of", RefKind::Field, &mut hint.of);
        self.optional("beside", RefKind::Field, &mut hint.beside);
        self.optional("spent", RefKind::Field, &mut hint.spent);
        if let Some(roll) = &mut hint.roll {
            self.at("roll", |w| {
                w.reference("action", RefKind::Action, &mut roll.action)
            });
        }
    }

    pub fn odds_hint(&mut self, hint: &mut OddsHint) {
        self.references("actions", RefKind::Action, &mut hint.actions);
        self.optional("field", RefKind::Field, &mut hint.field);
    }

    /// A standard copies query (the rules' or an item's).
    pub fn standard_copies(&mut self, query: &mut Query) {
        self.reference("type", RefKind::ContentType, &mut query.r#type);
    }

    // Content.

    pub fn item(&mut self, item: &mut ContentItem) {
        self.optional("type", RefKind::ContentType, &mut item.r#type);
        self.optional("extends", RefKind::Content, &mut item.extends);
        self.optional("override", RefKind::Content, &mut item.r#override);
        self.tags("tags", TagRole::Other, &item.tags);
        self.tags("removeTags", TagRole::Other, &item.remove_tags);
        if !item.fields.is_empty() {
            self.at("fields", |w| {
                w.visit.item_fields(&w.pointer, &mut item.fields)
            });
        }
        self.keyed("state", &mut item.state, Walk::state);
        self.list("effects", &mut item.effects, Walk::shared_effect);
        self.list("grants", &mut item.grants, Walk::grant);
        self.list("choices", &mut item.choices, Walk::choice);
        self.list("actions", &mut item.actions, Walk::action);
        self.list(
            "standardCopies",
            &mut item.standard_copies,
            Walk::standard_copies,
        );
        self.list("immuneTo", &mut item.immune_to, Walk::immunity);
        self.list("keepsTemplates", &mut item.keeps_templates, |w, kept| {
            w.reference("template", RefKind::Content, &mut kept.template);
            w.query("copies", &mut kept.copies);
        });
        self.references("hides", RefKind::Content, &mut item.hides);
        self.list("followUps", &mut item.follow_ups, Walk::follow_up);
    }

    fn grant(&mut self, grant: &mut Grant) {
        self.reference("item", RefKind::Content, &mut grant.item);
    }

    pub fn immunity(&mut self, immunity: &mut Immunity) {
        self.references("items", RefKind::Content, &mut immunity.items);
        if let Some(query) = &mut immunity.query {
            self.query("query", query);
        }
    }

    pub fn choice(&mut self, choice: &mut Choice) {
        self.at("options", |w| match &mut choice.options {
            ChoiceOptions::Inline(options) => {
                for (index, option) in options.iter_mut().enumerate() {
                    w.at(index, |w| {
                        w.list("effects", &mut option.effects, Walk::shared_effect);
                        w.list("grants", &mut option.grants, Walk::grant);
                        w.list("choices", &mut option.choices, Walk::choice);
                    });
                }
            }
            ChoiceOptions::Source(ChoiceSource::Content { content }) => w.query("content", content),
            ChoiceOptions::Source(_) => {}
        });
        self.list("effects", &mut choice.effects, Walk::shared_effect);
    }

    // Effects and changes.

    /// An effect shared between the places that read it (its `Arc` is still the model's own
    /// while the walk qualifies it, so nothing is copied).
    pub fn shared_effect(&mut self, effect: &mut std::sync::Arc<Effect>) {
        self.effect(std::sync::Arc::make_mut(effect));
    }

    pub fn effect(&mut self, effect: &mut Effect) {
        self.at("target", |w| match &mut effect.target {
            Target::Field(id) => w.reference_here(RefKind::Field, id),
            Target::Fields { .. } => {}
            Target::Rolls { rolls, parts, .. } => {
                w.tags("rolls", TagRole::Other, rolls);
                if let Some(parts) = parts {
                    w.tags("parts", TagRole::Other, parts);
                }
            }
            Target::Incoming { incoming } => w.at("incoming", |w| {
                if let Some(fields) = &mut incoming.fields {
                    w.references("fields", RefKind::Field, fields);
                }
                if let Some(tags) = &incoming.tags {
                    w.tags("tags", TagRole::Other, tags);
                }
            }),
            Target::Choices { choices, .. } => w.tags("choices", TagRole::OptionTarget, choices),
            Target::Steps { steps, .. } => w.tags("steps", TagRole::Other, steps),
        });
        if let Some(value) = &mut effect.value {
            self.at("value", |w| match value {
                EffectValue::Grant(GrantValue::Item { item }) => {
                    w.reference("item", RefKind::Content, item)
                }
                EffectValue::Grant(GrantValue::Field { field }) => {
                    w.reference("field", RefKind::Field, field)
                }
                EffectValue::Grant(GrantValue::Query { query }) => w.query("query", query),
                EffectValue::Grant(GrantValue::Tag { tag }) => {
                    w.at("tag", |w| w.visit.tag(&w.pointer, TagRole::Other, tag))
                }
                EffectValue::Option(option) => {
                    w.sent("changes", &mut option.changes, &mut option.to)
                }
                EffectValue::Changes(value) => w.sent("changes", &mut value.changes, &mut value.to),
                EffectValue::Grant(GrantValue::Formula { .. })
                | EffectValue::Formula(_)
                | EffectValue::RollModifier(_) => {}
            });
        }
        self.tag_entries("tags", TagRole::Other, &effect.tags);
        self.list("then", &mut effect.then, Walk::change);
    }

    /// Changes and where they go: to a `{ link }` they are the linked character's (reported as such),
    /// else this character's.
    fn sent(&mut self, key: &str, changes: &mut [Change], to: &mut Option<Destination>) {
        let to_link = self.destination(to);
        self.changes_to(key, changes, to_link);
    }

    fn changes_to(&mut self, key: &str, changes: &mut [Change], to_link: bool) {
        if to_link {
            if !changes.is_empty() {
                self.at(key, |w| w.visit.link_changes(&w.pointer, changes));
            }
        } else {
            self.list(key, changes, Walk::change);
        }
    }

    /// A `{ link }` destination; whether it is one.
    fn destination(&mut self, to: &mut Option<Destination>) -> bool {
        match to {
            Some(Destination::Link { link }) => {
                self.at("to", |w| w.reference("link", RefKind::LinkSlot, link));
                true
            }
            _ => false,
        }
    }

    fn change(&mut self, change: &mut Change) {
        if let Some(FieldRef::Literal(id)) = &mut change.field {
            self.reference("field", RefKind::Field, id);
        }
        self.tag_entries("tags", TagRole::Other, &change.tags);
        if let Some(EntryRef::New(new)) = &mut change.entry {
            self.at("entry", |w| {
                w.references("templates", RefKind::Content, &mut new.templates)
            });
        }
        if let Some(query) = &mut change.copies {
            self.query("copies", query);
        }
    }

    // Actions.

    pub fn action(&mut self, action: &mut Action) {
        self.optional("use", RefKind::Action, &mut action.r#use);
        self.keyed("params", &mut action.params, |w, param| {
            if let ParamEntry::Declared(decl) = param {
                w.of(&mut decl.of);
                w.default(decl.r#type, &decl.of, &mut decl.default);
                w.members(&decl.members);
            }
        });
        self.list("steps", &mut action.steps, Walk::step);
        if let Some(Results::Bands { bands }) = &mut action.results {
            self.at("results", |w| w.reference("bands", RefKind::BandSet, bands));
        }
    }

    fn step(&mut self, step: &mut Step) {
        let role = match step.kind {
            crate::StepKind::Choice => TagRole::ChoiceStep,
            _ => TagRole::Other,
        };
        self.tag_entries("tags", role, &step.tags);
        self.list("parts", &mut step.parts, |w, part| {
            w.tag_entries("tags", TagRole::Other, &part.tags);
        });
        self.optional("bands", RefKind::BandSet, &mut step.bands);
        let to_link = self.destination(&mut step.to);
        if let Some(options) = &mut step.options {
            self.at("options", |w| match options {
                StepOptions::Written(options) => {
                    for (index, option) in options.iter_mut().enumerate() {
                        // An option without its own `to` sends its changes where the step does.
                        w.at(index, |w| {
                            let link = match option.to {
                                Some(_) => w.destination(&mut option.to),
                                None => to_link,
                            };
                            w.changes_to("changes", &mut option.changes, link);
                        });
                    }
                }
                StepOptions::Source(StepSource::Content { content }) => w.query("content", content),
                StepOptions::Source(StepSource::Copies { copies }) => w.query("copies", copies),
                StepOptions::Source(StepSource::Pending { .. }) => {}
            });
        }
        self.changes_to("changes", &mut step.changes, to_link);
        self.list("cases", &mut step.cases, |w, case| {
            w.list("steps", &mut case.steps, Walk::step)
        });
        if let Some(otherwise) = &mut step.r#else {
            self.at("else", |w| {
                w.list("steps", &mut otherwise.steps, Walk::step)
            });
        }
        match &mut step.r#use {
            Some(id) if step.source.is_some() || step.entry.is_some() => {
                self.at("use", |w| w.visit.used_action(&w.pointer, id))
            }
            _ => self.optional("use", RefKind::Action, &mut step.r#use),
        }
        // Situational choice IDs are the map's keys: each is rewritten in its place.
        if !step.situational.is_empty() {
            self.at("situational", |w| {
                let written = std::mem::take(&mut step.situational.0);
                for (key, formula) in written {
                    let mut id = Id(key.clone());
                    w.at(&key, |w| w.reference_here(RefKind::Situational, &mut id));
                    step.situational.0.insert(id.0, formula);
                }
            });
        }
    }

    pub fn follow_up(&mut self, follow_up: &mut FollowUp) {
        self.sent("changes", &mut follow_up.changes, &mut follow_up.to);
        if follow_up.create == Some(true) {
            self.optional("link", RefKind::LinkSlot, &mut follow_up.link);
        }
    }
}
