//! The [`Context`] formulas are evaluated in on a sheet. Every read goes through a query: a field
//! through [`crate::db::field_value`], `self` through [`crate::db::copy_self`], `item` through
//! [`crate::db::item_view`], so salsa records exactly what each formula read, and a formula that
//! never reaches `self` does not depend on the copy.

use ocf_formula::{Context, ContextError, ErrorCode, Root, Value};
use std::sync::Arc;

use ocf_model::Ruleset;

use crate::db::{
    CharacterInput, CopyInput, FieldKey, ItemKey, character_view, copy_self, item_in_character,
};

use crate::reads::View;
use crate::view::{aggregate_copy_view, literal_value};

/// What the formula may read of the fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every field's computed value.
    Sheet,
    /// Activation conditions (EC, "Activation"): the raw values of input fields (saved value, or
    /// default) and nothing derived, so activation never depends on a field value.
    Activation,
}

/// `self` as a formula sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum SelfRef {
    /// No `self` (rules-level content): `has(self)` is false.
    None,
    /// A copy, read through [`copy_self`] only when the formula reaches it.
    Copy(CopyInput),
    /// An applied entry (`id` and its state), or any value made up front.
    Value(Value),
}

/// The names a formula sees besides the character: its pack, `self`, `item`, `pick`, `entry`.
#[derive(Debug, Clone)]
pub struct Bindings<'db> {
    /// Field names resolve in this pack, then its dependencies.
    pub pack: &'db str,
    pub self_ref: SelfRef,
    pub item: Option<ItemKey<'db>>,
    pub pick: Option<Value>,
    pub entry: Option<Value>,
    /// `slot`: the slot number, in a slotted choice's formulas and its inline options'.
    pub slot: Option<i64>,
}

impl<'db> Bindings<'db> {
    pub fn rules(pack: &'db str) -> Bindings<'db> {
        Bindings {
            pack,
            self_ref: SelfRef::None,
            item: None,
            pick: None,
            entry: None,
            slot: None,
        }
    }

    /// What an activation's own formulas see (its `available`, its prerequisites): `self` its copy
    /// or applied entry, `item` its item with the copy's templates.
    pub fn activation(
        db: &'db dyn salsa::Database,
        character: CharacterInput,
        pack: &'db str,
        a: &crate::db::Activation,
    ) -> Bindings<'db> {
        let ruleset = character.ruleset(db).ruleset(db);
        let self_ref = match (a.copy, a.applied_entry) {
            (Some(copy), _) => SelfRef::Copy(copy),
            (None, Some(e)) => SelfRef::Value(crate::view::applied_self(
                ruleset,
                &character.applied(db)[e],
            )),
            (None, None) => SelfRef::None,
        };
        let item = ItemKey::of_activation(db, character.ruleset(db), a);
        Bindings {
            pack,
            self_ref,
            item: Some(item),
            pick: None,
            entry: None,
            slot: None,
        }
    }
}

impl<'db> Bindings<'db> {
    /// What a copy's own actions (their `available` and steps) and follow-ups see on activation
    /// `a`: [`Bindings::activation`], with `self` also holding the copy's computed values (EC,
    /// "Copies and `self`"). Content picked or granted on the copy has that copy as `self`, so it
    /// sees them too; an applied entry's `self` has none.
    pub fn with_computed(
        db: &'db dyn salsa::Database,
        character: CharacterInput,
        pack: &'db str,
        a: &crate::db::Activation,
    ) -> Bindings<'db> {
        let mut bindings = Bindings::activation(db, character, pack, a);
        if let SelfRef::Copy(copy) = bindings.self_ref
            && crate::view::declares_values(db, character, copy)
        {
            let computed = crate::db::computed_values(db, character, copy);
            if !computed.values.is_empty()
                && let Value::Map(members) = copy_self(db, character, copy)
            {
                let mut members = (**members).clone();
                for (name, value) in &computed.values {
                    members.insert(name.as_str().into(), value.clone());
                }
                bindings.self_ref = SelfRef::Value(Value::Map(std::sync::Arc::new(members)));
            }
        }
        bindings
    }
}

/// A ruleset field's ID and the character's key of it ([`crate::db::field_keys`]).
type FieldEntry<'db> = (Arc<str>, FieldKey<'db>);

pub struct SheetContext<'db> {
    pub db: &'db dyn salsa::Database,
    pub character: CharacterInput,
    pub ruleset: &'db Ruleset,
    pub mode: Mode,
    pub bindings: Bindings<'db>,
    /// The character's key of each ruleset field ([`crate::db::field_keys`]), fetched at the
    /// first read, where no character was derived in the database (a derived character, which
    /// reads a few fields, would intern every key): a read by a resolved name interns nothing.
    keys: std::cell::OnceCell<Option<&'db [FieldEntry<'db>]>>,
}

impl<'db> SheetContext<'db> {
    pub fn new(
        db: &'db dyn salsa::Database,
        character: CharacterInput,
        mode: Mode,
        bindings: Bindings<'db>,
    ) -> SheetContext<'db> {
        let ruleset = character.ruleset(db).ruleset(db);
        SheetContext::with_ruleset(db, character, ruleset, mode, bindings)
    }

    /// [`SheetContext::new`] with the character's ruleset already read: a field's computation
    /// makes several contexts, and each read of the ruleset input is a salsa lookup.
    pub fn with_ruleset(
        db: &'db dyn salsa::Database,
        character: CharacterInput,
        ruleset: &'db Ruleset,
        mode: Mode,
        bindings: Bindings<'db>,
    ) -> SheetContext<'db> {
        SheetContext {
            db,
            character,
            ruleset,
            mode,
            bindings,
            keys: std::cell::OnceCell::new(),
        }
    }

    /// The context with the character's table of keys given (a field's computation fetched it
    /// once for its contexts), `None` where none may be used.
    pub(crate) fn with_keys(self, table: Option<&'db crate::db::FieldTable<'db>>) -> Self {
        let _ = self.keys.set(table.map(|t| &**t));
        self
    }

    /// Resolves a field name as written in the formula's pack (EC: "resolving field names in its
    /// pack and that pack's dependencies"). A pack the ruleset doesn't know (a test's) reads
    /// qualified IDs as they are.
    pub fn resolve(&self, id: &str) -> Option<Arc<str>> {
        crate::formula::resolve_field(self.ruleset, self.bindings.pack, id)
    }

    /// Evaluates the formula `text` here, parsed once per ruleset and the fields it names
    /// resolved in the context's pack once per ruleset ([`crate::formula::parse_resolved`]).
    pub fn evaluate(&self, text: &str) -> Result<Value, ocf_formula::FormulaError> {
        let (formula, names) =
            crate::formula::parse_resolved(self.ruleset, self.bindings.pack, text)?;
        self.evaluate_parsed(&formula, names)
    }

    /// Evaluates `formula` here, its field names resolved in the context's pack as `names` (from
    /// [`crate::formula::parse_resolved`]).
    pub fn evaluate_parsed(
        &self,
        formula: &ocf_formula::Formula,
        names: Option<crate::formula::ResolvedNames>,
    ) -> Result<Value, ocf_formula::FormulaError> {
        match names {
            Some(names) => formula.evaluate(&Resolved { ctx: self, names }),
            None => formula.evaluate(self),
        }
    }

    /// Reads the field `qualified` (`written` as the formula names it), the `place`th of the
    /// ruleset's fields if it is one.
    fn read(
        &self,
        written: &str,
        qualified: &Arc<str>,
        place: Option<u32>,
    ) -> Result<Option<Value>, ContextError> {
        crate::reads::field(qualified);
        match self.mode {
            Mode::Sheet => {
                let key = place
                    .and_then(|place| self.key_at(place))
                    .unwrap_or_else(|| FieldKey::new(self.db, self.character, qualified.clone()));
                let result = crate::db::field_value(self.db, key);
                match (&result.value, &result.error) {
                    (_, Some(error)) => Err(ContextError::new(
                        error.code,
                        format!("field `{written}`: {}", error.message),
                    )),
                    (Some(value), None) => Ok(Some(value.clone())),
                    (None, None) => Ok(None),
                }
            }
            Mode::Activation => match crate::view::raw_input(self.db, self.character, qualified) {
                Some(value) => Ok(Some(value)),
                None => Err(ContextError::new(
                    ErrorCode::TypeMismatch,
                    format!("an activation condition reads input fields only, not `{written}`"),
                )),
            },
        }
    }

    /// The character's key of the `place`th ruleset field, from the table of keys where it may be
    /// used.
    fn key_at(&self, place: u32) -> Option<FieldKey<'db>> {
        let keys = self.keys.get_or_init(|| {
            crate::derived::none_in(self.db)
                .then(|| &**crate::db::field_keys(self.db, self.character))
        });
        keys.and_then(|keys| keys.get(place as usize))
            .map(|(_, key)| *key)
    }
}

/// A [`SheetContext`] evaluating one formula whose field names are resolved: a field expression
/// is read by its place in the formula.
struct Resolved<'a, 'db> {
    ctx: &'a SheetContext<'db>,
    names: crate::formula::ResolvedNames,
}

impl Context for Resolved<'_, '_> {
    fn root(&self, root: Root) -> Result<Option<Value>, ContextError> {
        self.ctx.root(root)
    }

    fn field(&self, id: &str) -> Result<Option<Value>, ContextError> {
        self.ctx.field(id)
    }

    fn root_member(&self, root: Root, name: &str) -> Option<Result<Option<Value>, ContextError>> {
        self.ctx.root_member(root, name)
    }

    fn field_at(&self, at: ocf_formula::ExprId, id: &str) -> Result<Option<Value>, ContextError> {
        match self.names.get(at.into_raw().into_u32() as usize) {
            Some(Some(resolved)) => self.ctx.read(id, &resolved.id, Some(resolved.place)),
            _ => self.ctx.field(id),
        }
    }

    fn copies(&self) -> Result<Vec<Value>, ContextError> {
        self.ctx.copies()
    }

    fn field_views(&self) -> Result<Vec<Value>, ContextError> {
        self.ctx.field_views()
    }

    fn family_field(
        &self,
        family: &str,
        value: &str,
        field: &str,
    ) -> Result<Option<Value>, ContextError> {
        self.ctx.family_field(family, value, field)
    }
}

impl Context for SheetContext<'_> {
    fn root(&self, root: Root) -> Result<Option<Value>, ContextError> {
        // A copy's `self`, an item, the character's view and the links can change without any
        // field changing (crate::reads).
        match (root, &self.bindings.self_ref) {
            (Root::SelfCopy, SelfRef::Copy(copy)) => crate::reads::view(View::Copy(*copy)),
            (Root::Character, _) => crate::reads::view(View::Character),
            (Root::Links, _) => crate::reads::view(View::Links),
            (Root::Item, _) => crate::reads::other(),
            _ => {}
        }
        match root {
            Root::Entry if self.bindings.entry.is_some() => Ok(self.bindings.entry.clone()),
            Root::SelfCopy => Ok(match &self.bindings.self_ref {
                SelfRef::None => None,
                SelfRef::Copy(copy) => Some(copy_self(self.db, self.character, *copy).clone()),
                SelfRef::Value(v) => Some(v.clone()),
            }),
            Root::Item => Ok(self
                .bindings
                .item
                .and_then(|key| item_in_character(self.db, self.character, key).clone())),
            Root::Character => Ok(Some(character_view(self.db, self.character).clone())),
            Root::Pick if self.bindings.pick.is_some() => Ok(self.bindings.pick.clone()),
            Root::Slot if self.bindings.slot.is_some() => Ok(self.bindings.slot.map(Value::Int)),
            Root::Links => Ok(Some(crate::links::links_root(
                self.db,
                self.character,
                self.bindings.pack,
            ))),
            other => Err(ContextError::unknown(format!(
                "`{other}` is not bound on a sheet"
            ))),
        }
    }

    fn root_member(&self, root: Root, name: &str) -> Option<Result<Option<Value>, ContextError>> {
        // A copy's `equipped`, `quantity` and `id` are its inputs as they are: read alone, they
        // spare making its whole `self` (its item's view and state), most often for an effect's
        // `when: self.equipped`. A state key of the same name would stand in its place.
        let (Root::SelfCopy, SelfRef::Copy(copy)) = (root, &self.bindings.self_ref) else {
            return None;
        };
        let db = self.db;
        let value = match name {
            "equipped" => Value::Bool(copy.equipped(db)),
            "quantity" => Value::Int(copy.quantity(db) as i64),
            "id" => Value::string(copy.id(db).as_str()),
            _ => return None,
        };
        let decls = crate::view::state_decls(self.ruleset, copy.item(db), copy.templates(db));
        if decls.iter().any(|(key, _)| *key == name) {
            return None;
        }
        // No view is recorded: these inputs are the copy handle's own, which no pick changes (a
        // trial's reach), and a derived character shares a copy's handle only while the copy is
        // as it was, the handle then being part of the reading instance, which the judgement of
        // a derived value compares (crate::derived). An edit of the copy reaches the value
        // through salsa, which saw the input read.
        Some(Ok(Some(value)))
    }

    fn field(&self, id: &str) -> Result<Option<Value>, ContextError> {
        let Some(qualified) = self.resolve(id) else {
            return Err(ContextError::unknown(format!("no field `{id}`")));
        };
        self.read(id, &qualified, None)
    }

    fn copies(&self) -> Result<Vec<Value>, ContextError> {
        crate::reads::other();
        let c = self.character;
        Ok(c.inventory(self.db)
            .iter()
            .chain(c.features(self.db).iter())
            .map(|copy| aggregate_copy_view(self.db, c, *copy))
            .collect())
    }

    fn field_views(&self) -> Result<Vec<Value>, ContextError> {
        Ok(self
            .ruleset
            .fields
            .iter()
            .map(|(id, decl)| field_view(id, decl))
            .collect())
    }
}

/// A field as `sumFields` and a set-of-fields query see it: `{ id, type, tags }`, written tags.
pub fn field_view(id: &str, decl: &ocf_model::Declared<ocf_model::FieldDecl>) -> Value {
    let tags = decl
        .decl
        .tags
        .iter()
        .filter_map(|t| match t {
            ocf_model::Computed::Literal(tag) => Some(Value::string(tag.as_str())),
            ocf_model::Computed::Formula { .. } => None,
        })
        .collect();
    field_view_with_tags(id, decl, tags)
}

/// A field's view with the tags given (a sheet's computed tags).
pub fn field_view_with_tags(
    id: &str,
    decl: &ocf_model::Declared<ocf_model::FieldDecl>,
    tags: Vec<Value>,
) -> Value {
    let ty = serde_json::to_value(decl.decl.r#type)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    Value::map([
        ("id", Value::string(id)),
        ("type", Value::string(ty)),
        ("tags", Value::list(tags)),
    ])
}

/// Reads a literal of a field's type.
pub fn field_literal(literal: &ocf_model::Literal, ty: ocf_model::FieldType) -> Option<Value> {
    literal_value(literal, Some(ty))
}

/// Whether a field's tags include a `{ formula }` entry (rules-and-fields.md, "Tags from a formula").
pub(crate) fn has_computed_tags(decl: &ocf_model::Declared<ocf_model::FieldDecl>) -> bool {
    decl.decl
        .tags
        .iter()
        .any(|t| matches!(t, ocf_model::Computed::Formula { .. }))
}
