//! Activation (EC, "Activation"): what content is active and why. Found by walking from the rules'
//! picks, the copies (with their templates, grants and picks, depth first) and the `applied` list,
//! with immunities decided in rounds. Activation conditions read input fields raw
//! ([`Mode::Activation`]), so this query never depends on a field value and cannot sit on a loop.
//!
//! The walk ([`Walk`]) by the chapter's steps, each a module: [`copies`] (a copy's item and
//! templates), [`grants`], [`picks`], then the [`applied`] entries by the immunity steps: the
//! holder immunities, blocked entries and candidates and the applied grants' immunities in
//! [`immunity`] (steps 2, 3 and 5), the [`rounds`] (step 4).

mod applied;
mod copies;
mod grants;
mod immunity;
mod picks;
mod rounds;

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
            item: Some(ItemKey::of_activation(
                self.db,
                self.character.ruleset(self.db),
                activation,
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
                        && copy_matches(self.db, self.character, copy, &keep.copies, pack)
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

/// Whether a copy is of `query`'s type and its `where` holds, with `self` the copy and `item` its
/// item (an activation condition: input fields only).
pub(crate) fn copy_matches(
    db: &dyn salsa::Database,
    character: crate::db::CharacterInput,
    copy: crate::db::CopyInput,
    query: &ocf_model::Query,
    pack: &str,
) -> bool {
    use crate::context::{Bindings, Mode, SelfRef, SheetContext};
    let ruleset = character.ruleset(db).ruleset(db);
    let of_type = ruleset
        .item(copy.item(db))
        .and_then(|e| e.type_name())
        .is_some_and(|t| t == query.r#type.as_str());
    let Some(text) = &query.r#where else {
        return of_type;
    };
    if !of_type {
        return false;
    }
    let Ok(formula) = crate::formula::parse_in(ruleset, text.as_str()) else {
        return false;
    };
    let bindings = Bindings {
        self_ref: SelfRef::Copy(copy),
        item: Some(crate::db::ItemKey::of_copy(db, copy)),
        ..Bindings::rules(pack)
    };
    let ctx = SheetContext::new(db, character, Mode::Activation, bindings);
    matches!(formula.evaluate(&ctx), Ok(ocf_formula::Value::Bool(true)))
}
