//! Activation (EC, "Activation"): what content is active and why. Found by walking from the rules'
//! picks, the copies (with their templates, grants and picks, depth first) and the `applied` list,
//! with immunities decided in rounds. Activation conditions read input fields raw
//! ([`Mode::Activation`]), so this query never depends on a field value and cannot sit on a loop.

use std::sync::Arc;

use ocf_formula::Value;
use ocf_model::{AppliedEntry, Choice, ContentEntry, Immunity, PickEntry, Picks, Ruleset, Scope};

use crate::context::{Bindings, Mode, SelfRef, SheetContext};
use crate::db::copies_walk;
/// Declared in the query map ([`crate::db`]); kept here for the crates above.
pub use crate::db::{CharacterInput, CopyInput, ItemKey, activations};

use crate::view::applied_self;

/// At most this many activations (decisions.md, "Activation limit"): grants that fan out can
/// otherwise grow exponentially with depth.
pub const MAX_ACTIVATIONS: usize = 10_000;

/// A slotted choice has at most this many slots (decisions.md, "Choice slots"): its count is a
/// formula of untrusted content.
pub const MAX_SLOTS: i64 = 100;

/// Grants and picks nest at most this deep (`maxChoiceDepth`, PROVISIONAL; decisions.md).
pub const MAX_CHOICE_DEPTH: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Via {
    Copy,
    Template,
    Grant,
    Pick,
    Applied,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Copy => "copy",
            Via::Template => "template",
            Via::Grant => "grant",
            Via::Pick => "pick",
            Via::Applied => "applied",
        }
    }
}

/// One activation: content, why it is active, and what its formulas see as `self` and `item`.
#[derive(Debug, Clone, PartialEq)]
pub struct Activation {
    /// The content's qualified ID. It and the other names are shared (`Arc`): the walk hands an
    /// activation to every choice and grant it follows, and runs again on every pick.
    pub item: Arc<str>,
    pub via: Via,
    /// `applied` scope (an applied entry or its applied grant); holder otherwise.
    pub applied: bool,
    pub parent: Option<usize>,
    /// A pick's choice path, the picked option last.
    pub path: Option<Vec<String>>,
    /// The owner copy, which is `self`.
    pub copy: Option<CopyInput>,
    /// The index of the applied entry in `applied`, which is `self`.
    pub applied_entry: Option<usize>,
    /// The owner copy's instance ID or the applied entry's ID.
    pub entry: Option<Arc<str>>,
    /// The templates merged into `item` (a copy's and its templates' activations).
    pub templates: Arc<[String]>,
    /// The grant or choice that activated it waives prerequisites.
    pub waived: bool,
    /// For a template content keeps on the copy: the activation that keeps it (EC, "The
    /// activation list").
    pub kept_by: Option<usize>,
}

/// An `immune` issue: an applied entry an immunity blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocked {
    /// The immunity's activation; `None` for the rules'.
    pub activation: Option<usize>,
    /// `<owner>/<immunity id>`.
    pub id: String,
    /// The rules immunity's pack, for its source.
    pub rules_pack: Option<String>,
    pub entry: String,
    pub item: String,
    /// The blocked entry's place in `applied`, then the immunity's written order.
    pub order: (usize, usize),
}

/// Effects that apply per pick (EC, computeSheet "Effects"): a choice's `effects` once per pick,
/// with `pick` bound, whether or not the choice activates its picks; and a picked inline option's
/// own effects.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoicePick {
    /// The activation owning the choice; `None` for a rules-level choice.
    pub owner: Option<usize>,
    /// The content declaring the choice (the pack for a rules-level one).
    pub declared_by: String,
    /// The option IDs' prefix: `<owner>/<choice key>` for a choice's effects, the inline option's
    /// key root for its own.
    pub option_prefix: String,
    pub pack: String,
    pub effects: Vec<std::sync::Arc<ocf_model::Effect>>,
    /// `pick`: `{ id, value }`, the option as picked; `None` for an inline option's own effects.
    pub pick: Option<Value>,
    /// `slot`, in a slotted choice.
    pub slot: Option<i64>,
}

/// A picked inline option of an applicable choice.
#[derive(Debug, Clone, PartialEq)]
pub struct InlinePick {
    /// The owner of the choice (the option's `self`); `None` at the rules level.
    pub owner: Option<usize>,
    /// The choice it was picked in, in [`Activations::choices`].
    pub record: usize,
    /// `<owner root>.choices.<choice>.options.<option>`.
    pub root: String,
    pub option: String,
    pub pack: String,
    pub slot: Option<i64>,
}

/// A choice met while walking: a rules-level one, or one of an activation's content.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceRecord {
    /// The owner activation; `None` for a rules-level choice.
    pub owner: Option<usize>,
    /// The key root of the owner: its content ID, or `<pack>:rules`.
    pub root: String,
    /// The choice ID as declared.
    pub id: String,
    /// The choice's key in its picks tree.
    pub key: String,
    /// The owner copy's instance ID.
    pub entry: Option<String>,
    /// The path's segments: choice keys and picked options, this choice's key last.
    pub path: Vec<String>,
    /// Its `when` holds.
    pub applicable: bool,
    pub min: i64,
    pub max: Option<i64>,
    pub picks: Vec<ocf_model::Literal>,
    /// `required` isn't `false`.
    pub required: bool,
    /// For one slot of a slotted choice: the declared ID and the slot's number.
    pub slot: Option<(String, i64)>,
    /// The choice whose picked inline option declares this one.
    pub parent_record: Option<usize>,
    pub decl: std::sync::Arc<Choice>,
    /// The pack its formulas resolve names in.
    pub pack: String,
    /// `slot` as its formulas see it (its own, or its inline option's choice's).
    pub bound_slot: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Activations {
    pub list: Vec<Activation>,
    pub blocked: Vec<Blocked>,
    pub choice_picks: Vec<ChoicePick>,
    /// The picked inline options, in walk order.
    pub inline_picks: Vec<InlinePick>,
    /// Every choice met, applicable or not, in walk order.
    pub choices: Vec<ChoiceRecord>,
    /// [`MAX_ACTIVATIONS`] was reached: what is past it isn't activated.
    pub limit_reached: bool,
    /// What the walk's conditions read ([`crate::reads`]): a derived character whose reads are
    /// the same has the same activations ([`crate::derived::shares_activations_with`]). Not part
    /// of the value: it compares equal.
    pub reads: crate::reads::FieldReads,
}

pub(crate) fn activations_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Activations {
    if let Some(given) = crate::derived::shares_activations_with(db, character) {
        let shared = activations(db, given).clone();
        // Debug builds check the judgement against the walk on the derived character.
        if crate::derived::checked() {
            assert_eq!(shared, walk(db, character), "shared activations differ");
        }
        return shared;
    }
    walk(db, character)
}

fn walk(db: &dyn salsa::Database, character: CharacterInput) -> Activations {
    // The conditions' reads are the walk's, not those of a field whose computation asked first.
    let recorder = crate::reads::Recorder::start();
    let mut walk = Walk::new(db, character);
    walk.rules_picks();
    let copies = character.features(db).len() + character.inventory(db).len();
    let parts: Vec<&Activations> = (0..copies.div_ceil(COPIES_PER_PART))
        .map(|part| copies_walk(db, character, part))
        .collect();
    let total = walk.out.list.len() + parts.iter().map(|p| p.list.len()).sum::<usize>();
    let mut reads = Vec::new();
    if total < MAX_ACTIVATIONS && !walk.out.limit_reached {
        // Under the limit, the walk of the copies in one pass would never have found the list
        // full: each part as it was walked alone is what that pass makes of its copies.
        for part in parts {
            walk.append(part);
            reads.push(&part.reads);
        }
    } else {
        for copy in all_copies(db, character) {
            walk.copy(*copy);
        }
    }
    walk.applied();
    walk.kept_by();
    walk.out.reads = recorder.finish();
    for part in reads {
        walk.out.reads.extend(part);
    }
    // Debug builds check the parts against the walk of every copy in one pass.
    if crate::derived::checked() {
        assert_eq!(
            walk.out,
            walk_in_one_pass(db, character),
            "the copies' parts differ"
        );
    }
    walk.out
}

/// The activations found by walking every copy in one pass ([`walk`]'s parts checked).
fn walk_in_one_pass(db: &dyn salsa::Database, character: CharacterInput) -> Activations {
    let recorder = crate::reads::Recorder::start();
    let mut walk = Walk::new(db, character);
    walk.rules_picks();
    for copy in all_copies(db, character) {
        walk.copy(*copy);
    }
    walk.applied();
    walk.kept_by();
    walk.out.reads = recorder.finish();
    walk.out
}

/// The character's copies, features then inventory: the order the walk follows them in.
fn all_copies(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> impl Iterator<Item = &CopyInput> {
    character
        .features(db)
        .iter()
        .chain(character.inventory(db).iter())
}

/// How many copies one [`copies_walk`] walks.
const COPIES_PER_PART: usize = 8;

/// The activations of copies `part * 8 ..` (features then inventory), walked as if the list
/// started with them: a pick in the rules' tree or in another part's copies walks these again
/// only if what they read changed, where one walk of the whole character went through every copy
/// on every pick (listOptions' trials). [`walk`] appends the parts, moving their places in the
/// list, while the whole stays under the activation limit, and otherwise walks every copy in one
/// pass. 8 copies, not 1: a part is a memo and a key of its own, which a cold sheet pays for.
pub(crate) fn copies_walk_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
    part: usize,
) -> Activations {
    let recorder = crate::reads::Recorder::start();
    let mut walk = Walk::new(db, character);
    for copy in all_copies(db, character)
        .skip(part * COPIES_PER_PART)
        .take(COPIES_PER_PART)
    {
        walk.copy(*copy);
    }
    walk.out.reads = recorder.finish();
    walk.out
}

/// The templates of an activation without any, shared: the walk runs again on every pick, and
/// most copies have none.
fn no_templates() -> Arc<[String]> {
    static NONE: std::sync::OnceLock<Arc<[String]>> = std::sync::OnceLock::new();
    NONE.get_or_init(|| Arc::new([])).clone()
}

/// Whether an activation condition of `activation`'s content holds, with its `self` and `item`
/// bound (the kept templates' `when`, EC "Standard copies").
pub(crate) fn holds(
    db: &dyn salsa::Database,
    character: CharacterInput,
    activation: &Activation,
    when: Option<&ocf_model::Formula>,
) -> bool {
    let walk = Walk::new(db, character);
    let pack = content(walk.ruleset, activation).map_or("", |e| e.pack_of("keepsTemplates"));
    walk.condition(when, walk.bindings(activation, pack))
}

struct Walk<'db> {
    db: &'db dyn salsa::Database,
    character: CharacterInput,
    ruleset: &'db Ruleset,
    out: Activations,
    /// The choice path down to the pick being followed: choice keys and picked options.
    prefix: Vec<String>,
    /// While the applied entries are activated: the immunities their applied grants meet.
    immune: Option<Immunities<'db>>,
}

impl<'db> Walk<'db> {
    fn new(db: &'db dyn salsa::Database, character: CharacterInput) -> Walk<'db> {
        Walk {
            db,
            character,
            ruleset: character.ruleset(db).ruleset(db),
            out: Activations::default(),
            prefix: Vec::new(),
            immune: None,
        }
    }

    /// Appends the activations of a part walked alone ([`copies_walk`]), its places in the
    /// activation list and the choice list moved past what is already there.
    fn append(&mut self, part: &Activations) {
        let (at, records) = (self.out.list.len(), self.out.choices.len());
        let moved = |i: Option<usize>| i.map(|i| i + at);
        self.out.list.extend(part.list.iter().map(|a| Activation {
            parent: moved(a.parent),
            kept_by: moved(a.kept_by),
            ..a.clone()
        }));
        self.out
            .choice_picks
            .extend(part.choice_picks.iter().map(|p| ChoicePick {
                owner: moved(p.owner),
                ..p.clone()
            }));
        self.out
            .inline_picks
            .extend(part.inline_picks.iter().map(|p| InlinePick {
                owner: moved(p.owner),
                record: p.record + records,
                ..p.clone()
            }));
        self.out
            .choices
            .extend(part.choices.iter().map(|c| ChoiceRecord {
                owner: moved(c.owner),
                parent_record: c.parent_record.map(|r| r + records),
                ..c.clone()
            }));
    }

    /// An activation condition, evaluated in `pack` with `self` and `item` bound. A condition that
    /// fails to evaluate counts as false (decisions.md, "Failing activation conditions").
    fn condition(&self, text: Option<&ocf_model::Formula>, bindings: Bindings<'db>) -> bool {
        let Some(text) = text else {
            return true;
        };
        let Ok(formula) = crate::formula::parse_in(self.ruleset, text.as_str()) else {
            return false;
        };
        let ctx = SheetContext::new(self.db, self.character, Mode::Activation, bindings);
        matches!(formula.evaluate(&ctx), Ok(Value::Bool(true)))
    }

    fn bindings(&self, activation: &Activation, pack: &'db str) -> Bindings<'db> {
        let self_ref = match (activation.copy, activation.applied_entry) {
            (Some(copy), _) => SelfRef::Copy(copy),
            (None, Some(i)) => SelfRef::Value(applied_self(
                self.ruleset,
                &self.character.applied(self.db)[i],
            )),
            (None, None) => SelfRef::None,
        };
        Bindings {
            pack,
            self_ref,
            item: Some(ItemKey::new(
                self.db,
                self.character.ruleset(self.db),
                &*activation.item,
                &activation.templates[..],
            )),
            pick: None,
            entry: None,
            slot: None,
        }
    }

    /// `keptBy` of each template content keeps on its copy: the first activation whose
    /// `keepsTemplates` entry for it holds and matches the copy. A saved template has none.
    fn kept_by(&mut self) {
        let kept = self.character.kept(self.db).clone();
        if kept.is_empty() {
            return;
        }
        for t in 0..self.out.list.len() {
            let activation = &self.out.list[t];
            let Some(copy) = activation.copy else {
                continue;
            };
            if activation.via != Via::Template
                || !kept
                    .iter()
                    .any(|(id, template)| id == copy.id(self.db) && **template == *activation.item)
            {
                continue;
            }
            let template = activation.item.clone();
            let keeper = (0..self.out.list.len()).find(|&k| {
                let keeper = &self.out.list[k];
                let Some(entry) = self.ruleset.item(&keeper.item) else {
                    return false;
                };
                let pack = entry.pack_of("keepsTemplates");
                entry.item.keeps_templates.iter().any(|keep| {
                    keep.template.as_str() == &*template
                        && self.condition(keep.when.as_ref(), self.bindings(keeper, pack))
                        && crate::standard::copy_matches(
                            self.db,
                            self.character,
                            copy,
                            &keep.copies,
                            pack,
                        )
                })
            });
            self.out.list[t].kept_by = keeper;
        }
    }

    /// Whether the activation limit is reached (and records it).
    fn full(&mut self) -> bool {
        if self.out.list.len() >= MAX_ACTIVATIONS {
            self.out.limit_reached = true;
        }
        self.out.limit_reached
    }

    fn push(&mut self, activation: Activation) -> usize {
        self.out.list.push(activation);
        self.out.list.len() - 1
    }

    fn rules_picks(&mut self) {
        let rules_choices = self.character.choices(self.db).clone();
        for (id, choice) in self.ruleset.choices.iter() {
            let pack = choice.pack.as_str();
            let owner = ChoiceOwner {
                index: None,
                root: format!("{pack}:rules"),
                bindings: Bindings::rules(pack),
                pack,
                activation: None,
            };
            self.choice(&owner, &choice.decl, id.to_owned(), &rules_choices, 1, None);
        }
    }

    fn copy(&mut self, copy: CopyInput) {
        let db = self.db;
        let item = copy.item(db);
        if self.ruleset.item(item).is_none() {
            return;
        }
        let templates = match copy.templates(db).as_slice() {
            [] => no_templates(),
            some => some.into(),
        };
        let entry: Arc<str> = copy.id(db).as_str().into();
        let index = self.push(Activation {
            item: item.as_str().into(),
            via: Via::Copy,
            applied: false,
            parent: None,
            path: None,
            copy: Some(copy),
            applied_entry: None,
            entry: Some(entry.clone()),
            templates: templates.clone(),
            waived: false,
            kept_by: None,
        });
        let tree = copy.choices(db).clone();
        for template in templates.iter() {
            if self.ruleset.item(template).is_none() {
                continue;
            }
            let t = self.push(Activation {
                item: template.as_str().into(),
                via: Via::Template,
                applied: false,
                parent: Some(index),
                path: None,
                copy: Some(copy),
                applied_entry: None,
                entry: Some(entry.clone()),
                templates: templates.clone(),
                waived: false,
                kept_by: None,
            });
            self.follow(t, &tree, Some(template.as_str()), 1);
        }
        self.follow(index, &tree, None, 1);
    }

    /// The grants, then the choices, of activation `index`, depth first. `key` is the content's
    /// key in the picks tree: `None` for the tree's own item (bare choice IDs), else the content,
    /// whose choices are keyed `<content>/<id>`.
    fn follow(&mut self, index: usize, tree: &Picks, key: Option<&str>, depth: usize) {
        if depth > MAX_CHOICE_DEPTH {
            return;
        }
        let activation = self.out.list[index].clone();
        let Some(entry) = self.ruleset.item(&activation.item) else {
            return;
        };
        let type_decl = entry.type_name().and_then(|t| self.ruleset.content_type(t));
        let mut grants = Vec::new();
        if let Some(t) = type_decl {
            grants.extend(t.decl.grants.iter().map(|g| (g, t.pack.as_str())));
        }
        grants.extend(
            entry
                .item
                .grants
                .iter()
                .map(|g| (g, entry.pack_of("grants"))),
        );
        for (grant, pack) in grants {
            let bindings = self.bindings(&activation, pack);
            self.grant(grant, bindings, &activation, Some(index), tree, depth);
        }
        // Applied content offers no choices; content without choices needs no owner made.
        if activation.applied || entry.item.choices.is_empty() {
            return;
        }
        let pack = entry.pack_of("choices");
        let owner = ChoiceOwner {
            index: Some(index),
            root: activation.item.to_string(),
            bindings: self.bindings(&activation, pack),
            pack,
            activation: Some(activation.clone()),
        };
        for choice in &entry.item.choices {
            let base = match key {
                Some(content) => tree_key(tree, content, &choice.id),
                None => choice.id.clone(),
            };
            self.choice(&owner, choice, base, tree, depth, None);
        }
    }

    /// Follows one grant of `granter` (the activation whose `self` and owner the granted content
    /// shares), under `parent` in the activation list.
    fn grant(
        &mut self,
        grant: &ocf_model::Grant,
        bindings: Bindings<'db>,
        granter: &Activation,
        parent: Option<usize>,
        tree: &Picks,
        depth: usize,
    ) {
        let scope = grant.scope.unwrap_or(Scope::Holder);
        // Holder content follows holder grants; applied content its `scope: applied` ones.
        if (scope == Scope::Applied) != granter.applied {
            return;
        }
        if !self.condition(grant.when.as_ref(), bindings) {
            return;
        }
        let granted = grant.item.0.clone();
        if self.ruleset.item(&granted).is_none() || self.full() {
            return;
        }
        // A blocked applied grant is not activated, nor what it grants (EC, "Immunities" step 5).
        if granter.applied
            && let Some(entry) = granter.applied_entry
            && self.grant_blocked(entry, &granted)
        {
            return;
        }
        let g = self.push(Activation {
            item: granted.as_str().into(),
            via: if granter.applied {
                Via::Applied
            } else {
                Via::Grant
            },
            applied: granter.applied,
            parent,
            path: None,
            copy: granter.copy,
            applied_entry: granter.applied_entry,
            entry: granter.entry.clone(),
            templates: no_templates(),
            waived: grant.waive_prerequisites.unwrap_or(false),
            kept_by: None,
        });
        self.follow(g, tree, Some(granted.as_str()), depth + 1);
    }

    /// One declared choice: one choice per slot for a slotted one (keyed `<key>-<n>`, `slot`
    /// bound), each recorded, and its picks followed when it is applicable.
    fn choice(
        &mut self,
        owner: &ChoiceOwner<'db>,
        choice: &Choice,
        base_key: String,
        tree: &Picks,
        depth: usize,
        parent_record: Option<usize>,
    ) {
        let slots: Vec<Option<i64>> = match &choice.slots {
            None => vec![None],
            Some(count) => {
                let n = self
                    .count(count, owner.bindings.clone())
                    .unwrap_or(0)
                    .clamp(0, MAX_SLOTS);
                (1..=n).map(Some).collect()
            }
        };
        for slot in slots {
            let (key, id) = match slot {
                Some(n) => (format!("{base_key}-{n}"), format!("{}-{n}", choice.id)),
                None => (base_key.clone(), choice.id.clone()),
            };
            let bindings = Bindings {
                slot: slot.or(owner.bindings.slot),
                ..owner.bindings.clone()
            };
            let owner = ChoiceOwner {
                bindings,
                ..owner.clone()
            };
            let applicable = self.condition(choice.when.as_ref(), owner.bindings.clone());
            let picks = tree.get(&key).cloned().unwrap_or_default();
            let record = self.record(
                choice,
                &owner,
                &key,
                id,
                slot,
                applicable,
                &picks,
                parent_record,
            );
            if applicable {
                self.picks(&owner, choice, &key, &picks, depth, record);
            }
        }
    }

    /// The picks of an applicable choice: each pick runs the choice's `effects`; a picked content
    /// option is activated (unless the choice says `activate: false`), and a picked inline option
    /// applies its effects, follows its grants and offers its own choices.
    fn picks(
        &mut self,
        owner: &ChoiceOwner<'db>,
        choice: &Choice,
        choice_key: &str,
        picks: &[PickEntry],
        depth: usize,
        record: usize,
    ) {
        let declared_by = owner
            .index
            .map(|p| self.out.list[p].item.to_string())
            .unwrap_or_else(|| owner.pack.to_owned());
        if !choice.effects.is_empty() {
            for pick in picks {
                let id = match &pick.option {
                    serde_json::Value::String(s) => self
                        .resolve_content(owner.pack, s)
                        .unwrap_or_else(|| s.clone()),
                    other => other.to_string(),
                };
                let value = crate::view::literal_value(&pick.option, None).unwrap_or_default();
                self.out.choice_picks.push(ChoicePick {
                    owner: owner.index,
                    declared_by: declared_by.clone(),
                    option_prefix: format!("{declared_by}/{choice_key}"),
                    pack: owner.pack.to_owned(),
                    effects: choice.effects.clone(),
                    pick: Some(Value::map([("id", Value::string(id)), ("value", value)])),
                    slot: owner.bindings.slot,
                });
            }
        }
        if depth > MAX_CHOICE_DEPTH {
            return;
        }
        match &choice.options {
            ocf_model::ChoiceOptions::Inline(options) => {
                for pick in picks {
                    let Some(option) = options.iter().find(|o| pick.option.as_str() == Some(&o.id))
                    else {
                        continue;
                    };
                    self.inline_pick(owner, choice, choice_key, option, pick, depth, record);
                }
            }
            ocf_model::ChoiceOptions::Source(ocf_model::ChoiceSource::Content { .. })
                if choice.activate != Some(false) =>
            {
                for pick in picks {
                    let Some(option) = pick.option.as_str() else {
                        continue;
                    };
                    let Some(content) = self.resolve_content(owner.pack, option) else {
                        continue;
                    };
                    if self.full() {
                        return;
                    }
                    let mut path = self.prefix.clone();
                    path.extend([choice_key.to_owned(), content.clone()]);
                    let granter = owner.activation.as_ref();
                    let p = self.push(Activation {
                        item: content.as_str().into(),
                        via: Via::Pick,
                        applied: false,
                        parent: owner.index,
                        path: Some(path),
                        copy: granter.and_then(|a| a.copy),
                        applied_entry: None,
                        entry: granter.and_then(|a| a.entry.clone()),
                        templates: no_templates(),
                        waived: choice.waive_prerequisites.unwrap_or(false),
                        kept_by: None,
                    });
                    self.prefix.extend([choice_key.to_owned(), content.clone()]);
                    self.follow(p, &pick.choices, None, depth + 1);
                    self.prefix.truncate(self.prefix.len() - 2);
                }
            }
            // Values and formula options (and `activate: false`) activate nothing.
            _ => {}
        }
    }

    /// A picked inline option (EC, Activation: "A picked inline option | the owner of the choice"):
    /// its effects apply with the owner's `self`, its grants are followed as the owner's, and its
    /// choices are the owner's too, keyed in the pick's own tree under the root
    /// `<owner root>.choices.<choice>.options.<option>`.
    #[allow(clippy::too_many_arguments)]
    fn inline_pick(
        &mut self,
        owner: &ChoiceOwner<'db>,
        choice: &Choice,
        choice_key: &str,
        option: &ocf_model::InlineOption,
        pick: &PickEntry,
        depth: usize,
        record: usize,
    ) {
        let root = format!("{}.choices.{}.options.{}", owner.root, choice.id, option.id);
        self.out.inline_picks.push(InlinePick {
            owner: owner.index,
            record,
            root: root.clone(),
            option: option.id.clone(),
            pack: owner.pack.to_owned(),
            slot: owner.bindings.slot,
        });
        if !option.effects.is_empty() {
            let declared_by = owner
                .index
                .map(|p| self.out.list[p].item.to_string())
                .unwrap_or_else(|| owner.pack.to_owned());
            self.out.choice_picks.push(ChoicePick {
                owner: owner.index,
                declared_by,
                option_prefix: root.clone(),
                pack: owner.pack.to_owned(),
                effects: option.effects.clone(),
                pick: None,
                slot: owner.bindings.slot,
            });
        }
        self.prefix
            .extend([choice_key.to_owned(), option.id.clone()]);
        let granter = owner.activation.clone().unwrap_or_else(|| Activation {
            item: "".into(),
            via: Via::Grant,
            applied: false,
            parent: None,
            path: None,
            copy: None,
            applied_entry: None,
            entry: None,
            templates: no_templates(),
            waived: false,
            kept_by: None,
        });
        for grant in &option.grants {
            self.grant(
                grant,
                owner.bindings.clone(),
                &granter,
                owner.index,
                &pick.choices,
                depth,
            );
        }
        let nested = ChoiceOwner {
            root,
            ..owner.clone()
        };
        for inner in &option.choices {
            self.choice(
                &nested,
                inner,
                inner.id.clone(),
                &pick.choices,
                depth + 1,
                Some(record),
            );
        }
        self.prefix.truncate(self.prefix.len() - 2);
    }

    /// A count formula (a choice's `pick` or `slots`), evaluated as an activation condition is.
    fn count(&self, f: &ocf_model::Formula, bindings: Bindings<'db>) -> Option<i64> {
        let formula = crate::formula::parse_in(self.ruleset, f.as_str()).ok()?;
        let ctx = SheetContext::new(self.db, self.character, Mode::Activation, bindings);
        match formula.evaluate(&ctx) {
            Ok(Value::Int(n)) => Some(n),
            _ => None,
        }
    }

    /// Records a choice for `choices`, `pending` and the choice issues, its pick count evaluated as
    /// an activation condition is (a count that fails to evaluate is the default, 1). Returns its
    /// index in [`Activations::choices`].
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        choice: &Choice,
        owner: &ChoiceOwner<'db>,
        key: &str,
        id: String,
        slot: Option<i64>,
        applicable: bool,
        picks: &[PickEntry],
        parent_record: Option<usize>,
    ) -> usize {
        let bindings = owner.bindings.clone();
        let (min, max) = match &choice.pick {
            None => (1, Some(1)),
            Some(ocf_model::PickCount::Exactly(f)) => {
                let n = self.count(f, bindings).unwrap_or(1);
                (n, Some(n))
            }
            Some(ocf_model::PickCount::Range { min, max }) => (
                min.as_ref()
                    .and_then(|f| self.count(f, bindings.clone()))
                    .unwrap_or(0),
                max.as_ref().and_then(|f| self.count(f, bindings.clone())),
            ),
        };
        let mut path = self.prefix.clone();
        path.push(key.to_owned());
        let activation = owner.activation.as_ref();
        self.out.choices.push(ChoiceRecord {
            owner: owner.index,
            root: owner.root.clone(),
            id,
            key: key.to_owned(),
            entry: activation.and_then(|a| a.entry.as_deref().map(str::to_owned)),
            path,
            applicable,
            min,
            max,
            picks: picks.iter().map(|p| p.option.clone()).collect(),
            required: choice.required != Some(false),
            slot: slot.map(|n| (choice.id.clone(), n)),
            parent_record,
            decl: std::sync::Arc::new(choice.clone()),
            pack: owner.pack.to_owned(),
            bound_slot: owner.bindings.slot,
        });
        self.out.choices.len() - 1
    }

    fn resolve_content(&self, pack: &str, option: &str) -> Option<String> {
        if self.ruleset.item(option).is_some() {
            return Some(option.to_owned());
        }
        self.ruleset
            .resolve(pack, option, ocf_model::Namespace::Content)
    }

    /// Immunities, then the applied entries (EC, "Immunities").
    fn applied(&mut self) {
        let db = self.db;
        let applied = self.character.applied(db).clone();
        // Without applied entries no immunity has anything to block: their conditions aren't
        // evaluated (nor read what they would).
        if applied.is_empty() {
            return;
        }
        // 2. The active holder immunities: the rules', then each holder activation's.
        let mut holder: Vec<ActiveImmunity<'db>> = Vec::new();
        for (i, immunity) in self.ruleset.immune_to.iter().enumerate() {
            if self.condition(immunity.decl.when.as_ref(), Bindings::rules(&immunity.pack)) {
                holder.push(ActiveImmunity {
                    activation: None,
                    rules: true,
                    owner: immunity.pack.clone(),
                    pack: &immunity.pack,
                    immunity: &immunity.decl,
                    written: i,
                    bindings: Bindings::rules(&immunity.pack),
                    entry: None,
                    chain: Vec::new(),
                });
            }
        }
        for index in 0..self.out.list.len() {
            let activation = self.out.list[index].clone();
            let Some(entry) = self.ruleset.item(&activation.item) else {
                continue;
            };
            let pack = entry.pack_of("immuneTo");
            for (i, immunity) in entry.item.immune_to.iter().enumerate() {
                if immunity.scope == Some(Scope::Applied) {
                    continue;
                }
                let bindings = self.bindings(&activation, pack);
                if self.condition(immunity.when.as_ref(), bindings.clone()) {
                    holder.push(ActiveImmunity {
                        activation: Some(index),
                        rules: false,
                        owner: activation.item.to_string(),
                        pack,
                        immunity,
                        written: i,
                        bindings,
                        entry: None,
                        chain: Vec::new(),
                    });
                }
            }
        }
        // 3. Blocked entries and candidates.
        let live: Vec<usize> = (0..applied.len())
            .filter(|&i| {
                applied[i].active != Some(false)
                    && self.ruleset.item(applied[i].source.as_str()).is_some()
            })
            .collect();
        let mut blocked_by_holder = vec![false; applied.len()];
        for &i in &live {
            let source = applied[i].source.as_str();
            blocked_by_holder[i] = holder
                .iter()
                .any(|im| self.matches(im, source, &applied[i]));
        }
        let candidates: Vec<usize> = live
            .iter()
            .copied()
            .filter(|&i| !blocked_by_holder[i])
            .collect();
        // Each candidate's immunities (`scope: applied`, `when` holding): its source's, then those
        // of the content its applied grants reach, less grants a holder immunity blocks (step 5).
        let mut own: Vec<Vec<ActiveImmunity<'db>>> = vec![Vec::new(); applied.len()];
        for &c in &candidates {
            let activation = self.applied_activation(c, &applied[c]);
            let mut found = Vec::new();
            self.reach_immunities(
                &activation,
                vec![activation.item.to_string()],
                &holder,
                &mut found,
                1,
            );
            own[c] = found;
        }
        // blockers[x]: the candidates that block candidate x.
        let blocks = |a: usize, b: usize, this: &Self| {
            a != b
                && own[a]
                    .iter()
                    .any(|im| this.matches(im, applied[b].source.as_str(), &applied[b]))
        };
        let mut blockers: Vec<Vec<usize>> = vec![Vec::new(); applied.len()];
        for &x in &candidates {
            for &y in &candidates {
                if blocks(y, x, self) {
                    blockers[x].push(y);
                }
            }
        }
        // 4. Rounds.
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Undecided,
            Active,
            Blocked,
        }
        let mut state = vec![State::Undecided; applied.len()];
        while candidates.iter().any(|&c| state[c] == State::Undecided) {
            let mut activated = Vec::new();
            for &c in &candidates {
                if state[c] == State::Undecided
                    && blockers[c].iter().all(|&b| state[b] == State::Blocked)
                {
                    activated.push(c);
                }
            }
            if activated.is_empty() {
                // A cycle: the earliest undecided candidate that blocks itself through undecided
                // candidates becomes active.
                let undecided: Vec<usize> = candidates
                    .iter()
                    .copied()
                    .filter(|&c| state[c] == State::Undecided)
                    .collect();
                let reaches_itself = |start: usize| {
                    let mut seen = vec![false; applied.len()];
                    let mut stack = vec![start];
                    while let Some(x) = stack.pop() {
                        for &b in &blockers[x] {
                            if state[b] != State::Undecided {
                                continue;
                            }
                            if b == start {
                                return true;
                            }
                            if !seen[b] {
                                seen[b] = true;
                                stack.push(b);
                            }
                        }
                    }
                    false
                };
                let pick = undecided
                    .iter()
                    .copied()
                    .find(|&c| reaches_itself(c))
                    .unwrap_or(undecided[0]);
                activated.push(pick);
            }
            for &c in &activated {
                state[c] = State::Active;
            }
            for &c in &candidates {
                if state[c] == State::Undecided
                    && candidates
                        .iter()
                        .any(|&a| state[a] == State::Active && blocks(a, c, self))
                {
                    state[c] = State::Blocked;
                }
            }
        }
        let active: Vec<(usize, Vec<ActiveImmunity<'db>>)> = candidates
            .iter()
            .filter(|&&c| state[c] == State::Active)
            .map(|&c| (c, own[c].clone()))
            .collect();
        // `immune` for each blocked entry and each active immunity its source matches: the
        // holder's, then the active candidates' in `applied` order.
        let mut reports: Vec<Report<'db>> = Vec::new();
        for &i in &live {
            let blocked = blocked_by_holder[i] || state[i] == State::Blocked;
            if !blocked {
                continue;
            }
            let source = applied[i].source.as_str();
            let matching = holder
                .iter()
                .chain(
                    active
                        .iter()
                        .filter(|(a, _)| *a != i)
                        .flat_map(|(_, ims)| ims),
                )
                .filter(|im| self.matches(im, source, &applied[i]));
            for im in matching {
                reports.push(Report {
                    immunity: im.clone(),
                    order: i,
                    entry: applied[i].id.clone(),
                    item: source.to_owned(),
                });
            }
        }
        // Activation in `applied` order; their applied grants are checked against the immunities
        // as they are followed ([`Walk::grant_blocked`]).
        self.immune = Some(Immunities {
            holder,
            active,
            reports,
        });
        for &c in &candidates {
            if state[c] == State::Active {
                let activation = self.applied_activation(c, &applied[c]);
                let index = self.push(activation);
                let tree = Picks::default();
                self.follow(index, &tree, None, 1);
            }
        }
        let Some(immune) = self.immune.take() else {
            return;
        };
        let mut reports = immune.reports;
        reports.sort_by_key(|r| r.order);
        for report in reports {
            let activation = self.immunity_activation(&report.immunity);
            let im = &report.immunity;
            // A rules immunity is named `<pack>:<id>`, content's `<owner>/<id>` (EC, issues).
            let (id, rules_pack) = if im.rules {
                (
                    format!("{}:{}", im.pack, im.immunity.id),
                    Some(im.pack.to_owned()),
                )
            } else {
                (format!("{}/{}", im.owner, im.immunity.id), None)
            };
            self.out.blocked.push(Blocked {
                activation,
                id,
                rules_pack,
                entry: report.entry,
                item: report.item,
                order: (report.order, im.written),
            });
        }
    }

    /// The `scope: applied` immunities whose `when` holds of `activation` (applied content) and of
    /// the content its applied grants reach, depth first, skipping grants a holder immunity blocks.
    fn reach_immunities(
        &self,
        activation: &Activation,
        chain: Vec<String>,
        holder: &[ActiveImmunity<'db>],
        out: &mut Vec<ActiveImmunity<'db>>,
        depth: usize,
    ) {
        let Some(content) = self.ruleset.item(&activation.item) else {
            return;
        };
        let Some(index) = activation.applied_entry else {
            return;
        };
        let entry = &self.character.applied(self.db)[index];
        let pack = content.pack_of("immuneTo");
        for (i, immunity) in content.item.immune_to.iter().enumerate() {
            if immunity.scope != Some(Scope::Applied) {
                continue;
            }
            let bindings = self.bindings(activation, pack);
            if self.condition(immunity.when.as_ref(), bindings.clone()) {
                out.push(ActiveImmunity {
                    activation: None,
                    rules: false,
                    owner: activation.item.to_string(),
                    pack,
                    immunity,
                    written: i,
                    bindings,
                    entry: Some(index),
                    chain: chain.clone(),
                });
            }
        }
        if depth > MAX_CHOICE_DEPTH {
            return;
        }
        for (grant, pack) in self.grants_of(content) {
            if grant.scope != Some(Scope::Applied)
                || !self.condition(grant.when.as_ref(), self.bindings(activation, pack))
            {
                continue;
            }
            let granted = grant.item.as_str();
            if self.ruleset.item(granted).is_none()
                || holder.iter().any(|im| self.matches(im, granted, entry))
            {
                continue;
            }
            let next = Activation {
                item: granted.into(),
                ..activation.clone()
            };
            let mut chain = chain.clone();
            chain.push(granted.to_owned());
            self.reach_immunities(&next, chain, holder, out, depth + 1);
        }
    }

    /// The grants of `content`: its content type's, then its own, each with the pack it is in.
    fn grants_of(&self, content: &'db ContentEntry) -> Vec<(&'db ocf_model::Grant, &'db str)> {
        let mut grants = Vec::new();
        if let Some(t) = content
            .type_name()
            .and_then(|t| self.ruleset.content_type(t))
        {
            grants.extend(t.decl.grants.iter().map(|g| (g, t.pack.as_str())));
        }
        grants.extend(
            content
                .item
                .grants
                .iter()
                .map(|g| (g, content.pack_of("grants"))),
        );
        grants
    }

    /// Whether content an applied entry's grants reach is blocked (EC, "Immunities" step 5): it
    /// matches an active holder immunity or an immunity of another active candidate, as an entry
    /// whose source it were would (`entry` the granting entry). Each match is reported.
    fn grant_blocked(&mut self, entry_index: usize, granted: &str) -> bool {
        let Some(mut immune) = self.immune.take() else {
            return false;
        };
        let entry = &self.character.applied(self.db)[entry_index];
        let matching: Vec<ActiveImmunity<'db>> = immune
            .holder
            .iter()
            .chain(
                immune
                    .active
                    .iter()
                    .filter(|(a, _)| *a != entry_index)
                    .flat_map(|(_, ims)| ims),
            )
            .filter(|im| self.matches(im, granted, entry))
            .cloned()
            .collect();
        let blocked = !matching.is_empty();
        for im in matching {
            immune.reports.push(Report {
                immunity: im,
                order: entry_index,
                entry: entry.id.clone(),
                item: granted.to_owned(),
            });
        }
        self.immune = Some(immune);
        blocked
    }

    /// The activation an immunity belongs to: a holder one's own; an applied one's the activation
    /// of the content it was found on (its entry's, when that content wasn't activated).
    fn immunity_activation(&self, im: &ActiveImmunity<'db>) -> Option<usize> {
        if im.activation.is_some() {
            return im.activation;
        }
        let entry = im.entry?;
        let chain_of = |mut i: usize| {
            let mut chain = vec![&*self.out.list[i].item];
            while let Some(p) = self.out.list[i].parent {
                chain.push(&*self.out.list[p].item);
                i = p;
            }
            chain.reverse();
            chain
        };
        let of_entry: Vec<usize> = (0..self.out.list.len())
            .filter(|&i| self.out.list[i].applied && self.out.list[i].applied_entry == Some(entry))
            .collect();
        of_entry
            .iter()
            .copied()
            .find(|&i| chain_of(i) == im.chain)
            .or_else(|| of_entry.first().copied())
    }

    fn applied_activation(&self, index: usize, entry: &AppliedEntry) -> Activation {
        Activation {
            item: entry.source.0.as_str().into(),
            via: Via::Applied,
            applied: true,
            parent: None,
            path: None,
            copy: None,
            applied_entry: Some(index),
            entry: Some(entry.id.as_str().into()),
            templates: no_templates(),
            waived: false,
            kept_by: None,
        }
    }

    /// Whether `source` (an applied entry's source, or content its applied grants reach) matches
    /// the immunity: it is in `items`, or of the query's type with its `where` holding (`item` the
    /// source, `entry` the applied entry).
    fn matches(&self, im: &ActiveImmunity<'db>, source: &str, entry: &AppliedEntry) -> bool {
        if im.immunity.items.iter().any(|i| i.as_str() == source) {
            return true;
        }
        let Some(query) = &im.immunity.query else {
            return false;
        };
        let Some(content) = self.ruleset.item(source) else {
            return false;
        };
        if content.type_name() != Some(query.r#type.as_str()) {
            return false;
        }
        let bindings = Bindings {
            item: Some(ItemKey::new(
                self.db,
                self.character.ruleset(self.db),
                source,
                &[] as &[String],
            )),
            entry: Some(applied_self(self.ruleset, entry)),
            ..im.bindings.clone()
        };
        self.condition(query.r#where.as_ref(), bindings)
    }
}

/// The immunities decided before the applied entries are activated, and the `immune` issues found.
struct Immunities<'db> {
    holder: Vec<ActiveImmunity<'db>>,
    /// Each active candidate's entry index with its immunities, in `applied` order.
    active: Vec<(usize, Vec<ActiveImmunity<'db>>)>,
    reports: Vec<Report<'db>>,
}

/// An `immune` issue before its immunity's activation is known.
struct Report<'db> {
    immunity: ActiveImmunity<'db>,
    /// The blocked (or granting) entry's place in `applied`.
    order: usize,
    entry: String,
    item: String,
}

/// Who owns the choices being walked: an activation, or the rules.
#[derive(Clone)]
struct ChoiceOwner<'db> {
    index: Option<usize>,
    /// The key root: the content ID, `<pack>:rules`, or an inline option's root.
    root: String,
    /// What the choices' formulas see (`self`, `item`, `slot`).
    bindings: Bindings<'db>,
    pack: &'db str,
    activation: Option<Activation>,
}

/// The key of a granted content's or template's choice in the picks tree: `<content>/<id>`, with
/// the content's qualified ID when the tree uses it, else its local one (decisions.md, "Choice
/// keys of granted content").
fn tree_key(tree: &Picks, content: &str, id: &str) -> String {
    let qualified = format!("{content}/{id}");
    if tree.get(&qualified).is_some() {
        return qualified;
    }
    format!("{}/{id}", crate::view::bare(content))
}

#[derive(Clone)]
struct ActiveImmunity<'db> {
    activation: Option<usize>,
    rules: bool,
    /// The owner's content ID, or the pack for the rules'.
    owner: String,
    pack: &'db str,
    immunity: &'db Immunity,
    written: usize,
    bindings: Bindings<'db>,
    /// For a candidate's immunity: its applied entry, and the content from the entry's source down
    /// to the content declaring it.
    entry: Option<usize>,
    chain: Vec<String>,
}

/// The item of an activation, for its formulas.
pub fn content<'r>(ruleset: &'r Ruleset, activation: &Activation) -> Option<&'r ContentEntry> {
    ruleset.item(&activation.item)
}
