//! A walk over one source document's typed value that lists what the checks look at, each with its JSON
//! pointer in the document: every formula (and whether it is an activation condition), every reference
//! by ID (and what it must name), every tag used.
//!
//! One walk, three lists: the checks then need no knowledge of where in the format a formula or a
//! reference may stand.

use ocf_model::{
    Action, BandSet, Change, Choice, ChoiceOptions, ChoicePathSegments, ChoiceSource, Computed,
    ComputedDecl, ContentItem, ContentTypeDecl, Destination, Effect, EffectValue, EntryRef,
    FieldDecl, FieldRef, FollowUp, Formula, Grant, GrantValue, Id, Immunity, ItemFieldDecl, Keyed,
    NewPick, ParamEntry, PickCount, Query, Results, RulesDocument, StateDecl, Step, StepOptions,
    StepRecommend, StepSource, Tag, TagEntry, Target,
};

use super::locations::escape;

/// What a reference must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefKind {
    Content,
    ContentType,
    Field,
    Action,
    BandSet,
    Situational,
    LinkSlot,
    CreationStart,
    FollowUp,
    /// An action step's `use` beside `source` or `entry`: a rules action, else an action a
    /// content item or content type defines (EA "Other steps", `source`).
    UsedAction,
}

impl RefKind {
    /// How a message names it.
    pub fn noun(self) -> &'static str {
        match self {
            RefKind::Content => "content item",
            RefKind::ContentType => "content type",
            RefKind::Field => "field",
            RefKind::Action => "rules action",
            RefKind::BandSet => "band set",
            RefKind::Situational => "situational choice",
            RefKind::LinkSlot => "link slot",
            RefKind::CreationStart => "creation start",
            RefKind::FollowUp => "follow-up",
            RefKind::UsedAction => "rules action or content's action",
        }
    }

    /// As `data.kind` gives it.
    pub fn name(self) -> &'static str {
        match self {
            RefKind::Content => "content",
            RefKind::ContentType => "contentType",
            RefKind::Field => "field",
            RefKind::Action => "action",
            RefKind::BandSet => "bands",
            RefKind::Situational => "situational",
            RefKind::LinkSlot => "link",
            RefKind::CreationStart => "creation",
            RefKind::FollowUp => "followUp",
            RefKind::UsedAction => "action",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormulaUse {
    pub pointer: String,
    pub text: String,
    /// A grant's or choice's `when`, an immunity's `when` or query `where` (engine-core
    /// "Activation"): it may not read a derived field.
    pub activation: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUse {
    pub pointer: String,
    pub kind: RefKind,
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagUse {
    pub pointer: String,
    pub tag: String,
}

/// Everything one document uses.
#[derive(Debug, Default)]
pub struct Uses {
    pub formulas: Vec<FormulaUse>,
    pub refs: Vec<RefUse>,
    pub tags: Vec<TagUse>,
}

pub fn rules(doc: &RulesDocument) -> Uses {
    let mut walker = Walker::default();
    walker.rules(doc);
    walker.uses
}

/// A content file's items; `listed` when the file is a list (pointers `/0`, `/1`, ...).
pub fn content(items: &[ContentItem], listed: bool) -> Uses {
    let mut walker = Walker::default();
    for (index, item) in items.iter().enumerate() {
        if listed {
            walker.at(index, |w| w.item(item));
        } else {
            walker.item(item);
        }
    }
    walker.uses
}

#[derive(Default)]
struct Walker {
    pointer: String,
    uses: Uses,
    /// The actions of the item or content type being walked: its follow-ups may name them.
    own_actions: Vec<String>,
    /// The follow-ups of the item or content type being walked: its `offerFollowUp`s may name them
    /// by bare ID (EA: "one the content declares").
    own_follow_ups: Vec<String>,
}

impl Walker {
    fn at<R>(&mut self, segment: impl ToString, f: impl FnOnce(&mut Walker) -> R) -> R {
        let len = self.pointer.len();
        self.pointer.push('/');
        self.pointer.push_str(&escape(&segment.to_string()));
        let out = f(self);
        self.pointer.truncate(len);
        out
    }

    fn list<T>(&mut self, key: &str, items: &[T], mut f: impl FnMut(&mut Walker, &T)) {
        self.at(key, |w| {
            for (index, item) in items.iter().enumerate() {
                w.at(index, |w| f(w, item));
            }
        });
    }

    fn keyed<T>(&mut self, key: &str, items: &Keyed<T>, mut f: impl FnMut(&mut Walker, &str, &T)) {
        self.at(key, |w| {
            for (name, item) in items.iter() {
                w.at(name, |w| f(w, name, item));
            }
        });
    }

    // Leaves.

    fn formula(&mut self, key: &str, formula: &Option<Formula>) {
        if let Some(formula) = formula {
            self.at(key, |w| w.formula_here(formula, false));
        }
    }

    fn activation(&mut self, key: &str, formula: &Option<Formula>) {
        if let Some(formula) = formula {
            self.at(key, |w| w.formula_here(formula, true));
        }
    }

    fn formula_here(&mut self, formula: &Formula, activation: bool) {
        self.uses.formulas.push(FormulaUse {
            pointer: self.pointer.clone(),
            text: formula.as_str().to_owned(),
            activation,
        });
    }

    fn formulas(&mut self, key: &str, formulas: &Keyed<Formula>) {
        self.keyed(key, formulas, |w, _, f| w.formula_here(f, false));
    }

    fn reference(&mut self, key: &str, kind: RefKind, id: &Option<Id>) {
        if let Some(id) = id {
            self.at(key, |w| w.reference_here(kind, id.as_str()));
        }
    }

    fn reference_here(&mut self, kind: RefKind, id: &str) {
        self.uses.refs.push(RefUse {
            pointer: self.pointer.clone(),
            kind,
            id: id.to_owned(),
        });
    }

    fn references(&mut self, key: &str, kind: RefKind, ids: &[Id]) {
        self.list(key, ids, |w, id| w.reference_here(kind, id.as_str()));
    }

    /// An `of`: `field`, or a content type.
    fn of(&mut self, of: &Option<Id>) {
        if let Some(of) = of
            && of.as_str() != "field"
        {
            self.at("of", |w| {
                w.reference_here(RefKind::ContentType, of.as_str())
            });
        }
    }

    fn tag_here(&mut self, tag: &Tag) {
        self.uses.tags.push(TagUse {
            pointer: self.pointer.clone(),
            tag: tag.as_str().to_owned(),
        });
    }

    fn tags(&mut self, key: &str, tags: &[Tag]) {
        self.list(key, tags, |w, tag| w.tag_here(tag));
    }

    fn tag_entries(&mut self, key: &str, entries: &[TagEntry]) {
        self.list(key, entries, |w, entry| match entry {
            Computed::Literal(tag) => w.tag_here(tag),
            Computed::Formula { formula } => w.at("formula", |w| w.formula_here(formula, false)),
        });
    }

    // Rules.

    fn rules(&mut self, doc: &RulesDocument) {
        self.keyed("fields", &doc.fields, |w, _, field| w.field(field));
        self.keyed("contentTypes", &doc.content_types, |w, _, ty| {
            w.content_type(ty)
        });
        self.keyed("templateFields", &doc.template_fields, |w, _, field| {
            w.item_field(field)
        });
        self.keyed("situational", &doc.situational, |w, _, decl| {
            w.formula("available", &decl.available);
            w.list("effects", &decl.effects, |w, e| w.effect(e));
        });
        self.keyed("bands", &doc.bands, |w, _, set| w.band_set(set));
        self.list("actions", &doc.actions, Walker::action);
        self.list("choices", &doc.choices, Walker::choice);
        self.keyed("constraints", &doc.constraints, |w, _, constraint| {
            w.at("check", |w| w.formula_here(&constraint.check, false));
            if let Some(query) = &constraint.copies {
                w.at("copies", |w| w.query(query, false));
            }
            w.formulas("data", &constraint.data);
        });
        self.list("creation", &doc.creation, |w, start| {
            w.at("action", |w| {
                w.reference_here(RefKind::Action, start.action.as_str())
            });
        });
        self.list("followUps", &doc.follow_ups, Walker::follow_up);
        self.list("displayGroups", &doc.display_groups, |w, group| {
            w.reference("type", RefKind::ContentType, &group.r#type);
        });
        // A hint's `group` may be a later pack's display group: loadRuleset checks it.
        self.list("fieldHints", &doc.field_hints, |w, hint| {
            w.at("field", |w| {
                w.reference_here(RefKind::Field, hint.field.as_str())
            });
            if let Some(spent) = &hint.spent {
                w.at("spent", |w| {
                    w.reference_here(RefKind::Field, spent.as_str())
                });
            }
            if let Some(roll) = &hint.roll {
                w.at("roll", |w| {
                    w.at("action", |w| {
                        w.reference_here(RefKind::Action, roll.action.as_str())
                    })
                });
            }
        });
        self.list("oddsHints", &doc.odds_hints, |w, hint| {
            w.references("actions", RefKind::Action, &hint.actions);
            w.reference("field", RefKind::Field, &hint.field);
        });
        self.list("standardCopies", &doc.standard_copies, |w, q| {
            w.query(q, false)
        });
        self.list("immuneTo", &doc.immune_to, Walker::immunity);
        self.list("effects", &doc.effects, |w, e| w.effect(e));
    }

    fn field(&mut self, field: &FieldDecl) {
        self.of(&field.of);
        self.formula("formula", &field.formula);
        self.formula("min", &field.min);
        self.formula("max", &field.max);
        self.keyed("limits", &field.limits, |w, _, limit| {
            w.formula("min", &limit.min);
            w.formula("max", &limit.max);
        });
        self.tag_entries("tags", &field.tags);
        self.tags("members", &field.members);
        self.reference("nameFrom", RefKind::Field, &field.name_from);
        self.references("absorbs", RefKind::Field, &field.absorbs);
        self.reference("overflow", RefKind::Field, &field.overflow);
    }

    fn item_field(&mut self, field: &ItemFieldDecl) {
        self.of(&field.of);
        self.tags("members", &field.members);
    }

    fn state(&mut self, state: &StateDecl) {
        self.of(&state.of);
        if let Some(Computed::Formula { formula }) = &state.default {
            self.at("default", |w| {
                w.at("formula", |w| w.formula_here(formula, false))
            });
        }
        self.formula("min", &state.min);
        self.formula("max", &state.max);
        self.tags("members", &state.members);
    }

    fn computed(&mut self, computed: &Keyed<ComputedDecl>) {
        self.keyed("computed", computed, |w, _, decl| {
            w.at("formula", |w| w.formula_here(&decl.formula, false));
        });
    }

    fn band_set(&mut self, set: &BandSet) {
        self.formula("value", &set.value);
        self.list("bands", &set.bands, |w, band| {
            w.at("when", |w| w.formula_here(&band.when, false));
        });
    }

    // Content.

    fn content_type(&mut self, ty: &ContentTypeDecl) {
        self.own_follow_ups = follow_up_ids(&ty.follow_ups);
        self.keyed("fields", &ty.fields, |w, _, field| w.item_field(field));
        self.keyed("state", &ty.state, |w, _, state| w.state(state));
        self.computed(&ty.computed);
        self.list("effects", &ty.effects, |w, e| w.effect(e));
        self.list("grants", &ty.grants, Walker::grant);
        self.list("actions", &ty.actions, Walker::action);
        let outer = std::mem::replace(&mut self.own_actions, action_ids(&ty.actions));
        self.list("followUps", &ty.follow_ups, Walker::follow_up);
        self.own_actions = outer;
    }

    fn item(&mut self, item: &ContentItem) {
        self.own_follow_ups = follow_up_ids(&item.follow_ups);
        self.reference("type", RefKind::ContentType, &item.r#type);
        self.reference("extends", RefKind::Content, &item.extends);
        self.reference("override", RefKind::Content, &item.r#override);
        self.tags("tags", &item.tags);
        self.tags("removeTags", &item.remove_tags);
        self.keyed("state", &item.state, |w, _, state| w.state(state));
        self.computed(&item.computed);
        self.list("effects", &item.effects, |w, e| w.effect(e));
        self.list("grants", &item.grants, Walker::grant);
        self.list("choices", &item.choices, Walker::choice);
        self.list("actions", &item.actions, Walker::action);
        self.list("prerequisites", &item.prerequisites, |w, p| {
            w.at("check", |w| w.formula_here(&p.check, false));
        });
        self.list("standardCopies", &item.standard_copies, |w, q| {
            w.query(q, false)
        });
        self.list("immuneTo", &item.immune_to, Walker::immunity);
        self.list("keepsTemplates", &item.keeps_templates, |w, kept| {
            w.at("template", |w| {
                w.reference_here(RefKind::Content, kept.template.as_str())
            });
            w.at("copies", |w| w.query(&kept.copies, false));
            w.formula("when", &kept.when);
        });
        self.references("hides", RefKind::Content, &item.hides);
        let outer = std::mem::replace(&mut self.own_actions, action_ids(&item.actions));
        self.list("followUps", &item.follow_ups, Walker::follow_up);
        self.own_actions = outer;
    }

    fn grant(&mut self, grant: &Grant) {
        self.at("item", |w| {
            w.reference_here(RefKind::Content, grant.item.as_str())
        });
        self.activation("when", &grant.when);
    }

    fn query(&mut self, query: &Query, activation: bool) {
        self.at("type", |w| {
            w.reference_here(RefKind::ContentType, query.r#type.as_str())
        });
        if activation {
            self.activation("where", &query.r#where);
        } else {
            self.formula("where", &query.r#where);
        }
    }

    fn immunity(&mut self, immunity: &Immunity) {
        self.references("items", RefKind::Content, &immunity.items);
        if let Some(query) = &immunity.query {
            self.at("query", |w| w.query(query, true));
        }
        self.activation("when", &immunity.when);
    }

    fn choice(&mut self, choice: &Choice) {
        match &choice.pick {
            Some(PickCount::Exactly(count)) => self.at("pick", |w| w.formula_here(count, false)),
            Some(PickCount::Range { min, max }) => self.at("pick", |w| {
                w.formula("min", min);
                w.formula("max", max);
            }),
            None => {}
        }
        self.activation("when", &choice.when);
        self.at("options", |w| match &choice.options {
            ChoiceOptions::Inline(options) => {
                for (index, option) in options.iter().enumerate() {
                    w.at(index, |w| {
                        w.list("prerequisites", &option.prerequisites, |w, p| {
                            w.at("check", |w| w.formula_here(&p.check, false));
                        });
                        w.list("effects", &option.effects, |w, e| w.effect(e));
                        w.list("grants", &option.grants, Walker::grant);
                        w.list("choices", &option.choices, Walker::choice);
                    });
                }
            }
            ChoiceOptions::Source(ChoiceSource::Content { content }) => {
                w.at("content", |w| w.query(content, false));
            }
            ChoiceOptions::Source(ChoiceSource::Values { where_, .. }) => {
                w.formula("where", where_);
            }
            ChoiceOptions::Source(ChoiceSource::Formula { formula }) => {
                w.at("formula", |w| w.formula_here(formula, false));
            }
        });
        self.formula("eligible", &choice.eligible);
        self.list("effects", &choice.effects, |w, e| w.effect(e));
        self.formula("slots", &choice.slots);
        self.formula("recommend", &choice.recommend);
    }

    // Effects and changes.

    fn effect(&mut self, effect: &Effect) {
        self.at("target", |w| match &effect.target {
            Target::Field(id) => w.reference_here(RefKind::Field, id.as_str()),
            Target::Fields { fields } => {
                w.at("fields", |w| {
                    w.at("where", |w| w.formula_here(&fields.r#where, false))
                });
            }
            Target::Rolls { rolls, parts, .. } => {
                w.tags("rolls", rolls);
                if let Some(parts) = parts {
                    w.tags("parts", parts);
                }
            }
            Target::Incoming { incoming } => w.at("incoming", |w| {
                if let Some(fields) = &incoming.fields {
                    w.references("fields", RefKind::Field, fields);
                }
                if let Some(tags) = &incoming.tags {
                    w.tags("tags", tags);
                }
            }),
            Target::Choices { choices, .. } => w.tags("choices", choices),
            Target::Steps { steps, .. } => w.tags("steps", steps),
        });
        if let Some(value) = &effect.value {
            self.at("value", |w| w.effect_value(value));
        }
        self.formula("when", &effect.when);
        self.tag_entries("tags", &effect.tags);
        self.list("then", &effect.then, Walker::change);
    }

    fn effect_value(&mut self, value: &EffectValue) {
        match value {
            EffectValue::Formula(formula) => self.formula_here(formula, false),
            EffectValue::Grant(grant) => match grant {
                GrantValue::Item { item } => {
                    self.at("item", |w| {
                        w.reference_here(RefKind::Content, item.as_str())
                    });
                }
                GrantValue::Tag { tag } => self.at("tag", |w| w.tag_here(tag)),
                GrantValue::Field { field } => {
                    self.at("field", |w| {
                        w.reference_here(RefKind::Field, field.as_str())
                    });
                }
                GrantValue::Query { query } => self.at("query", |w| w.query(query, false)),
                GrantValue::Formula { formula } => {
                    self.at("formula", |w| w.formula_here(formula, false));
                }
            },
            EffectValue::RollModifier(modifier) => {
                self.formula("below", &modifier.below);
                self.formula("count", &modifier.count);
                self.formula("value", &modifier.value);
                self.formula("at", &modifier.at);
                self.formula("factor", &modifier.factor);
                self.formula("steps", &modifier.steps);
                self.list("faces", &modifier.faces, |w, f| w.formula_here(f, false));
            }
            EffectValue::Option(option) => {
                self.list("changes", &option.changes, Walker::change);
                self.destination(&option.to);
                self.formulas("flags", &option.flags);
            }
            EffectValue::Changes(changes) => {
                self.list("changes", &changes.changes, Walker::change);
                self.destination(&changes.to);
            }
        }
    }

    fn destination(&mut self, to: &Option<Destination>) {
        if let Some(Destination::Link { link }) = to {
            self.at("to", |w| {
                w.at("link", |w| {
                    w.reference_here(RefKind::LinkSlot, link.as_str())
                })
            });
        }
    }

    fn change(&mut self, change: &Change) {
        self.formula("when", &change.when);
        self.formula("forEach", &change.for_each);
        match &change.field {
            Some(FieldRef::Literal(id)) => {
                self.at("field", |w| w.reference_here(RefKind::Field, id.as_str()));
            }
            Some(FieldRef::Formula { formula }) => {
                self.at("field", |w| {
                    w.at("formula", |w| w.formula_here(formula, false))
                });
            }
            None => {}
        }
        self.formula("value", &change.value);
        self.formula("by", &change.by);
        self.tag_entries("tags", &change.tags);
        if let Some(entry) = &change.entry {
            self.at("entry", |w| w.entry(entry));
        }
        if let Some(query) = &change.copies {
            self.at("copies", |w| w.query(query, false));
        }
        self.formula("limit", &change.limit);
        self.formula("equipped", &change.equipped);
        for (key, query) in [("picks", &change.picks), ("applied", &change.applied)] {
            if let Some(query) = query {
                self.at(key, |w| {
                    w.at("where", |w| w.formula_here(&query.r#where, false));
                    w.formula("limit", &query.limit);
                });
            }
        }
        self.formula("source", &change.source);
        self.formula("active", &change.active);
        self.formulas("state", &change.state);
        self.formula("template", &change.template);
        if let Some(path) = &change.path {
            self.at("path", |w| {
                if let Some(entry) = &path.entry {
                    w.at("entry", |w| w.entry(entry));
                }
                if let ChoicePathSegments::Formula(formula) = &path.choice {
                    w.at("choice", |w| w.formula_here(formula, false));
                }
            });
        }
        self.formula("option", &change.option);
        if let Some(follow_up) = &change.follow_up
            && !self
                .own_follow_ups
                .iter()
                .any(|own| own == follow_up.as_str())
        {
            self.at("followUp", |w| {
                w.reference_here(RefKind::FollowUp, follow_up.as_str())
            });
        }
        self.formulas("params", &change.params);
    }

    fn entry(&mut self, entry: &EntryRef) {
        match entry {
            EntryRef::Named(_) => {}
            EntryRef::Formula { formula } => self.at("formula", |w| w.formula_here(formula, false)),
            EntryRef::New(new) => {
                self.at("item", |w| w.formula_here(&new.item, false));
                self.formula("quantity", &new.quantity);
                self.formula("equipped", &new.equipped);
                self.formulas("state", &new.state);
                self.references("templates", RefKind::Content, &new.templates);
                self.picks(&new.choices);
            }
        }
    }

    fn picks(&mut self, picks: &Keyed<Vec<NewPick>>) {
        self.keyed("choices", picks, |w, _, list| {
            for (index, pick) in list.iter().enumerate() {
                w.at(index, |w| {
                    if let Computed::Formula { formula } = &pick.option {
                        w.at("option", |w| {
                            w.at("formula", |w| w.formula_here(formula, false))
                        });
                    }
                    w.picks(&pick.choices);
                });
            }
        });
    }

    // Actions.

    fn action(&mut self, action: &Action) {
        self.reference("use", RefKind::Action, &action.r#use);
        self.formula("available", &action.available);
        self.keyed("params", &action.params, |w, _, param| match param {
            ParamEntry::Fixed(formula) => w.formula_here(formula, false),
            ParamEntry::Declared(decl) => {
                w.of(&decl.of);
                w.formula("where", &decl.r#where);
                w.tags("members", &decl.members);
            }
        });
        self.list("steps", &action.steps, Walker::step);
        if let Some(Results::Bands { bands }) = &action.results {
            self.at("results", |w| {
                w.at("bands", |w| {
                    w.reference_here(RefKind::BandSet, bands.as_str())
                })
            });
        }
    }

    fn step(&mut self, step: &Step) {
        self.formula("when", &step.when);
        self.tag_entries("tags", &step.tags);
        self.list("parts", &step.parts, |w, part| {
            w.formula("dice", &part.dice);
            w.formula("value", &part.value);
            w.formula("field", &part.field);
            w.formula("when", &part.when);
            w.tag_entries("tags", &part.tags);
            w.formula("ifEmpty", &part.if_empty);
        });
        self.reference("bands", RefKind::BandSet, &step.bands);
        if let Some(options) = &step.options {
            self.at("options", |w| match options {
                StepOptions::Written(options) => {
                    for (index, option) in options.iter().enumerate() {
                        w.at(index, |w| {
                            w.formula("when", &option.when);
                            w.list("changes", &option.changes, Walker::change);
                            w.destination(&option.to);
                            w.formulas("flags", &option.flags);
                        });
                    }
                }
                StepOptions::Source(StepSource::Content { content }) => {
                    w.at("content", |w| w.query(content, false));
                }
                StepOptions::Source(StepSource::Copies { copies }) => {
                    w.at("copies", |w| w.query(copies, false));
                }
                StepOptions::Source(StepSource::Pending { pending }) => {
                    w.at("pending", |w| w.formula("entry", &pending.entry));
                }
            });
        }
        match &step.recommend {
            Some(StepRecommend::Option(formula)) => {
                self.at("recommend", |w| w.formula_here(formula, false));
            }
            Some(StepRecommend::Amounts(amounts)) => self.formulas("recommend", amounts),
            None => {}
        }
        self.formula("prefer", &step.prefer);
        self.formula("random", &step.random);
        if let Some(repeat) = &step.repeat {
            self.at("repeat", |w| {
                w.at("max", |w| w.formula_here(&repeat.max, false));
                w.formula("min", &repeat.min);
            });
        }
        self.list("changes", &step.changes, Walker::change);
        if let Some(fields) = &step.fields {
            self.at("fields", |w| w.formula("where", &fields.r#where));
        }
        self.formula("budget", &step.budget);
        self.formula("limit", &step.limit);
        self.formula("cost", &step.cost);
        self.list("values", &step.values, |w, f| w.formula_here(f, false));
        self.list("cases", &step.cases, |w, case| {
            w.at("when", |w| w.formula_here(&case.when, false));
            w.formulas("flags", &case.flags);
            w.list("steps", &case.steps, Walker::step);
        });
        if let Some(otherwise) = &step.r#else {
            self.at("else", |w| {
                w.formulas("flags", &otherwise.flags);
                w.list("steps", &otherwise.steps, Walker::step);
            });
        }
        self.destination(&step.to);
        if let Some(release) = &step.release {
            self.at("release", |w| w.formula("where", &release.r#where));
        }
        let used = if step.source.is_some() || step.entry.is_some() {
            RefKind::UsedAction
        } else {
            RefKind::Action
        };
        self.reference("use", used, &step.r#use);
        self.formulas("params", &step.params);
        self.formula("source", &step.source);
        self.formula("entry", &step.entry);
        self.formulas("participants", &step.participants);
        self.keyed("situational", &step.situational, |w, id, formula| {
            w.reference_here(RefKind::Situational, id);
            w.formula_here(formula, false);
        });
        self.formula("result", &step.result);
        self.formulas("data", &step.data);
    }

    fn follow_up(&mut self, follow_up: &FollowUp) {
        if let Some(action) = &follow_up.action
            && !self.own_actions.iter().any(|own| own == action.as_str())
        {
            self.at("action", |w| {
                w.reference_here(RefKind::Action, action.as_str())
            });
        }
        self.formula("while", &follow_up.r#while);
        self.formula("on", &follow_up.on);
        self.formula("becomes", &follow_up.becomes);
        self.list("changes", &follow_up.changes, Walker::change);
        self.destination(&follow_up.to);
        self.reference("link", RefKind::LinkSlot, &follow_up.link);
        self.reference("start", RefKind::CreationStart, &follow_up.start);
        self.formulas("params", &follow_up.params);
    }
}

fn follow_up_ids(follow_ups: &[FollowUp]) -> Vec<String> {
    follow_ups.iter().map(|f| f.id.clone()).collect()
}

fn action_ids(actions: &[Action]) -> Vec<String> {
    actions.iter().filter_map(|a| a.id.clone()).collect()
}
