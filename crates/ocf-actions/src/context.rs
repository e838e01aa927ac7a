//! The context of a formula in an action (EA "Starting an action" 5): the sheet's names (fields,
//! `character`, `links`, `item`, `self`) through ocf-engine's [`SheetContext`], and the action's
//! own (`params`, `situational`, `participants`, `participant`, `steps`, `flags`, `action`, and the
//! names a step binds: `roll`, `x`, `part`, `picked`, `picks`, `options`).

use std::cell::OnceCell;
use std::rc::Rc;
use std::sync::Arc;

use ocf_engine::context::{Bindings, Mode, SelfRef, SheetContext};
use ocf_engine::input::CharacterInput;
use ocf_engine::view::ItemKey;
use ocf_formula::{Context, ContextError, Root, Value};

use crate::error::ActionError;
use crate::tag::Tag;

/// A formula context: the sheet's, with extra roots on top.
pub struct ActionContext<'a> {
    pub sheet: SheetContext<'a>,
    /// The roots this context binds itself, read before `shared`.
    roots: Vec<(Root, Value)>,
    /// Roots several contexts share as they are (a roll's effects share their step's), read
    /// after `roots`: a context made for one more formula copies none of them.
    shared: Option<Rc<Vec<(Root, Value)>>>,
    /// In the formulas of content's effects (an added option, changes content adds): the
    /// instance ID of the copy or applied entry carrying the effect, which `entry: self` names
    /// (EA "Changes content adds": "`entry: self` its copy"; EF "Options added to choice steps").
    /// `None` elsewhere: `entry: self` is the action's entry.
    pub content_entry: Option<Option<&'a str>>,
    /// `action` at a step, made when a formula first reads it (unless `roots` binds `action`).
    pub step_action: Option<Rc<StepAction>>,
}

/// `action` at a step (EA "Starting an action" 5): the action's `item` and `self`, and `step`, the
/// step's `{ id, tags }`. Made when a formula first reads it, once for every context of the
/// step that shares it: most steps' formulas never read it.
pub struct StepAction {
    base: Value,
    id: Arc<str>,
    tags: Rc<[Tag]>,
    /// Whether `tags` are the step's own, evaluated without an error ([`crate::run::own_tags`]).
    own: bool,
    tags_value: OnceCell<Value>,
    made: OnceCell<Value>,
}

impl StepAction {
    /// `base` is the action's `{ item, self }`.
    pub fn new(base: Value, id: &str, tags: Vec<Tag>, own: bool) -> Rc<StepAction> {
        Rc::new(StepAction {
            base,
            id: ocf_formula::value::shared(id),
            tags: tags.into(),
            own,
            tags_value: OnceCell::new(),
            made: OnceCell::new(),
        })
    }

    /// The step's tags.
    pub fn tags(&self) -> &[Tag] {
        &self.tags
    }

    /// The step's tags if they are its own ([`crate::run::own_tags`] gave them).
    pub fn own_tags(&self) -> Option<Rc<[Tag]>> {
        self.own.then(|| self.tags.clone())
    }

    /// The tags as a list value.
    pub fn tags_value(&self) -> &Value {
        self.tags_value.get_or_init(|| {
            Value::list(self.tags.iter().map(|t| Value::String(t.clone())).collect())
        })
    }

    /// The `action` value.
    pub fn value(&self) -> &Value {
        self.made.get_or_init(|| {
            let mut action = self.base.clone();
            set_member(
                &mut action,
                "step",
                Value::map([
                    ("id", Value::String(self.id.clone())),
                    ("tags", self.tags_value().clone()),
                ]),
            );
            action
        })
    }
}

impl<'a> ActionContext<'a> {
    pub fn new(
        db: &'a dyn salsa::Database,
        character: CharacterInput,
        pack: &'a str,
        self_ref: SelfRef,
        item: Option<ItemKey<'a>>,
    ) -> ActionContext<'a> {
        let ruleset = character.ruleset(db).ruleset(db);
        ActionContext::in_ruleset(db, character, ruleset, pack, self_ref, item)
    }

    /// [`ActionContext::new`] with the character's ruleset already read (the run's): each read of
    /// the ruleset input is a salsa lookup, and a step makes several contexts.
    pub fn in_ruleset(
        db: &'a dyn salsa::Database,
        character: CharacterInput,
        ruleset: &'a ocf_model::Ruleset,
        pack: &'a str,
        self_ref: SelfRef,
        item: Option<ItemKey<'a>>,
    ) -> ActionContext<'a> {
        let bindings = Bindings {
            pack,
            self_ref,
            item,
            pick: None,
            entry: None,
            slot: None,
        };
        ActionContext {
            sheet: SheetContext::with_ruleset(db, character, ruleset, Mode::Sheet, bindings),
            roots: Vec::new(),
            shared: None,
            content_entry: None,
            step_action: None,
        }
    }

    /// A new context binding what this one binds (its copy, item, roots and content entry), for a
    /// formula evaluated once per element or part with one more root bound on it.
    pub fn rebound(&self) -> ActionContext<'a> {
        let mut c = ActionContext::in_ruleset(
            self.sheet.db,
            self.sheet.character,
            self.sheet.ruleset,
            self.sheet.bindings.pack,
            self.sheet.bindings.self_ref.clone(),
            self.sheet.bindings.item,
        );
        c.copy_roots(self);
        c.content_entry = self.content_entry;
        c
    }

    /// Binds what `other` binds of the action's roots (its `roots` and `action`).
    pub fn copy_roots(&mut self, other: &ActionContext<'_>) {
        self.copy_bound_roots(other);
        self.step_action.clone_from(&other.step_action);
    }

    /// Binds `other`'s roots, but not its step's `action`.
    pub fn copy_bound_roots(&mut self, other: &ActionContext<'_>) {
        self.roots.clone_from(&other.roots);
        self.shared.clone_from(&other.shared);
    }

    /// Binds `roots` as they are, shared with every context given them, under the roots this
    /// context binds itself.
    pub fn share_roots(&mut self, roots: Rc<Vec<(Root, Value)>>) {
        self.shared = Some(roots);
    }

    /// Reserves room for `n` roots of its own.
    pub fn reserve_roots(&mut self, n: usize) {
        self.roots.reserve(n);
    }

    /// A root as bound here (own roots first, then shared ones).
    pub fn bound(&self, root: Root) -> Option<&Value> {
        self.roots
            .iter()
            .chain(self.shared.iter().flat_map(|s| s.iter()))
            .find(|(r, _)| *r == root)
            .map(|(_, v)| v)
    }

    /// Every root bound here, each once (own roots before the shared ones they hide).
    pub fn bound_roots(&self) -> impl Iterator<Item = &(Root, Value)> {
        let own = &self.roots;
        own.iter().chain(
            self.shared
                .iter()
                .flat_map(|s| s.iter())
                .filter(move |(r, _)| !own.iter().any(|(o, _)| o == r)),
        )
    }

    /// `action`, as a formula reads it.
    pub fn action_value(&self) -> Option<Value> {
        match self.bound(Root::Action) {
            Some(v) => Some(v.clone()),
            None => self.step_action.as_ref().map(|a| a.value().clone()),
        }
    }

    /// Binds (or rebinds) a root.
    pub fn bind(&mut self, root: Root, value: Value) {
        if root == Root::Action {
            self.step_action = None;
        }
        bind_root(&mut self.roots, root, value);
    }

    pub fn unbind(&mut self, root: Root) {
        if root == Root::Action {
            self.step_action = None;
        }
        // A shared root can't be hidden: the shared ones are copied in first.
        if let Some(shared) = self.shared.take_if(|s| s.iter().any(|(r, _)| *r == root)) {
            for (r, v) in shared.iter() {
                if !self.roots.iter().any(|(o, _)| o == r) {
                    self.roots.push((*r, v.clone()));
                }
            }
        }
        self.roots.retain(|(r, _)| *r != root);
    }

    /// `item` as the formula sees it (absent when none).
    pub fn item_value(&self) -> Option<Value> {
        self.sheet.root(Root::Item).ok().flatten()
    }

    /// `self` as the formula sees it (absent when none).
    pub fn self_value(&self) -> Option<Value> {
        self.sheet.root(Root::SelfCopy).ok().flatten()
    }

    /// Evaluates `text`, parsed, checked and lowered once per ruleset (the table the sheet's own
    /// formulas share: `ocf_engine::formula::parse_in`). Every text an action evaluates is the
    /// ruleset's, or a piece of one (a summary's subexpression, a substituted path), so the table
    /// stays within what the ruleset writes.
    pub fn eval(&self, text: &str) -> Result<Value, ActionError> {
        let formula = ocf_engine::formula::parse_in(self.sheet.ruleset, text)
            .map_err(|e| ActionError::formula(&e, text))?;
        formula
            .evaluate(self)
            .map_err(|e| ActionError::formula(&e, text))
    }

    /// A condition: `true` holds, `false` doesn't, anything else is `type-mismatch`.
    pub fn condition(&self, text: &str) -> Result<bool, ActionError> {
        match self.eval(text)? {
            Value::Bool(b) => Ok(b),
            other => Err(ActionError::new(
                "type-mismatch",
                format!("`{text}` gives a {}, not a boolean", other.type_name()),
            )
            .with("formula", text)),
        }
    }
}

impl Context for ActionContext<'_> {
    fn root(&self, root: Root) -> Result<Option<Value>, ContextError> {
        if let Some(v) = self.bound(root) {
            return Ok(match v {
                Value::Null => None,
                v => Some(v.clone()),
            });
        }
        match root {
            // `character.id`, the file's `id` (DA "Handoffs": `participants: { attacker:
            // '[character.id]' }`), on top of the engine's character view.
            Root::Character => Ok(self.sheet.root(root)?.map(|mut view| {
                if member(&view, "id").is_none() {
                    set_member(
                        &mut view,
                        "id",
                        Value::string(self.sheet.character.id(self.sheet.db).as_str()),
                    );
                }
                view
            })),
            Root::Action if self.step_action.is_some() => {
                Ok(self.step_action.as_ref().map(|a| a.value().clone()))
            }
            Root::SelfCopy | Root::Item | Root::Links | Root::Entry => self.sheet.root(root),
            // The action's roots an outer formula didn't bind read as absent: `has(steps.x)`.
            Root::Params
            | Root::Situational
            | Root::Participants
            | Root::Steps
            | Root::Flags
            | Root::Action => Ok(Some(Value::map(Vec::<(&str, Value)>::new()))),
            Root::Participant | Root::Roll | Root::X | Root::Part | Root::Picked | Root::Picks => {
                Ok(None)
            }
            other => self.sheet.root(other),
        }
    }

    fn field(&self, id: &str) -> Result<Option<Value>, ContextError> {
        self.sheet.field(id)
    }

    fn copies(&self) -> Result<Vec<Value>, ContextError> {
        self.sheet.copies()
    }

    fn field_views(&self) -> Result<Vec<Value>, ContextError> {
        self.sheet.field_views()
    }

    fn family_field(
        &self,
        family: &str,
        value: &str,
        field: &str,
    ) -> Result<Option<Value>, ContextError> {
        self.sheet.family_field(family, value, field)
    }
}

/// Binds (or rebinds) `root` among `roots`.
pub fn bind_root(roots: &mut Vec<(Root, Value)>, root: Root, value: Value) {
    match roots.iter_mut().find(|(r, _)| *r == root) {
        Some(slot) => slot.1 = value,
        None => roots.push((root, value)),
    }
}

/// A map value's member.
pub fn member<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    match value {
        Value::Map(m) => m.get(key),
        _ => None,
    }
}

/// Inserts `key` into a map value (a non-map becomes an empty map first).
pub fn set_member(value: &mut Value, key: &str, v: Value) {
    if !matches!(value, Value::Map(_)) {
        *value = Value::map(Vec::<(&str, Value)>::new());
    }
    if let Value::Map(m) = value {
        std::sync::Arc::make_mut(m).insert(ocf_formula::value::key(key), v);
    }
}

/// Inserts `members` into a map value (a non-map becomes an empty map first), a name already
/// there taking its new value: a case's or an option's flags. A few are inserted one by one; as
/// many as a pack writes are sorted into the map once, each insert into the middle of its members
/// moving the rest.
pub fn set_members(value: &mut Value, members: Vec<(String, Value)>) {
    if members.len() <= 8 {
        for (k, v) in members {
            set_member(value, &k, v);
        }
        return;
    }
    if !matches!(value, Value::Map(_)) {
        *value = Value::map(Vec::<(&str, Value)>::new());
    }
    if let Value::Map(m) = value {
        std::sync::Arc::make_mut(m).extend(
            members
                .into_iter()
                .map(|(k, v)| (ocf_formula::value::key(&k), v)),
        );
    }
}

pub fn empty_map() -> Value {
    Value::map(Vec::<(&str, Value)>::new())
}

impl ActionContext<'_> {
    /// `picked.id`, in a choice step's changes.
    pub fn sheet_root_picked(&self) -> Option<String> {
        let picked = self.bound(Root::Picked)?;
        match member(picked, "id") {
            Some(Value::String(s)) => Some(s.to_string()),
            _ => None,
        }
    }
}
