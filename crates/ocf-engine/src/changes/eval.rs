//! The context a change's formulas are evaluated in: the receiving character's sheet (its fields,
//! `character`, the copy aggregates), with `self` and `item` as the change's target binds them and
//! the roots only a change has: `incoming` for an incoming-change effect, `batch` ("what the batch
//! did"), `x` for a `forEach` element.

use ocf_formula::{Context, ContextError, Root, Value};

use crate::context::{Bindings, Mode, SelfRef, SheetContext};
use crate::db::{CharacterInput, CopyInput, ItemKey};

/// `self` as a change's formula sees it, owned so it can go to the session's worker thread.
#[derive(Debug, Clone, Default)]
pub enum OwnedSelf {
    #[default]
    None,
    /// A copy of the receiving character, read as the sheet reads it.
    Copy(CopyInput),
    /// An applied entry's `{ id, state }`, or any value made up front.
    Value(Value),
}

/// What one formula of a change is evaluated with.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Names resolve in this pack (and its dependencies); empty: qualified IDs only.
    pub pack: String,
    pub self_ref: OwnedSelf,
    /// `item`: a content ID and the templates it is read with.
    pub item: Option<(String, Vec<String>)>,
    /// `pick` and `slot`, for a choice's effects (EC, "Effects": "each choice's `effects` once per
    /// pick (with `pick` bound)").
    pub pick: Option<Value>,
    pub slot: Option<i64>,
    /// `incoming`, `batch`, `x`, `situational`: bound as given.
    pub roots: Vec<(Root, Value)>,
}

impl Scope {
    pub fn in_pack(pack: impl Into<String>) -> Scope {
        Scope {
            pack: pack.into(),
            ..Scope::default()
        }
    }

    pub fn with_root(mut self, root: Root, value: Value) -> Scope {
        self.roots.retain(|(r, _)| *r != root);
        self.roots.push((root, value));
        self
    }
}

/// The sheet's context with a change's own roots in front.
struct ChangeContext<'db, 'a> {
    inner: SheetContext<'db>,
    roots: &'a [(Root, Value)],
}

impl Context for ChangeContext<'_, '_> {
    fn root(&self, root: Root) -> Result<Option<Value>, ContextError> {
        if let Some((_, value)) = self.roots.iter().find(|(r, _)| *r == root) {
            return Ok(Some(value.clone()));
        }
        self.inner.root(root)
    }

    fn field(&self, id: &str) -> Result<Option<Value>, ContextError> {
        self.inner.field(id)
    }

    fn copies(&self) -> Result<Vec<Value>, ContextError> {
        self.inner.copies()
    }

    fn field_views(&self) -> Result<Vec<Value>, ContextError> {
        self.inner.field_views()
    }

    fn family_field(
        &self,
        family: &str,
        value: &str,
        field: &str,
    ) -> Result<Option<Value>, ContextError> {
        self.inner.family_field(family, value, field)
    }
}

/// Evaluates `text` on `character` in `scope`. Runs on the database given (the session's worker
/// thread calls it, whose stack holds deep field chains).
pub fn evaluate(
    db: &dyn salsa::Database,
    character: CharacterInput,
    text: &str,
    scope: &Scope,
) -> Result<Value, ocf_formula::FormulaError> {
    let formula = crate::formula::parse(db, text)?;
    let self_ref = match &scope.self_ref {
        OwnedSelf::None => SelfRef::None,
        OwnedSelf::Copy(copy) => SelfRef::Copy(*copy),
        OwnedSelf::Value(v) => SelfRef::Value(v.clone()),
    };
    let item = scope.item.as_ref().map(|(id, templates)| {
        ItemKey::new(db, character.ruleset(db), id.clone(), templates.clone())
    });
    let inner = SheetContext::new(
        db,
        character,
        Mode::Sheet,
        Bindings {
            pack: &scope.pack,
            self_ref,
            item,
            pick: scope.pick.clone(),
            entry: None,
            slot: scope.slot,
        },
    );
    let ctx = ChangeContext {
        inner,
        roots: &scope.roots,
    };
    formula.evaluate(&ctx)
}
