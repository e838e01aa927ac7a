//! The database: salsa storage, plus an optional log of the queries that really ran (and of the
//! memos salsa checked and kept), for the incremental tests and `ocf watch`'s "N field values
//! recomputed".

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use salsa::{DatabaseKeyIndex, Event, EventKind};

/// The sheet database. Cheap to clone (a clone shares the storage); a setter waits for every
/// clone to drop, so keep clones short-lived.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    executed: Option<Arc<Mutex<Log>>>,
    /// How many inputs derived characters made here ([`Database::derived`]).
    derived: Arc<AtomicUsize>,
    /// What a caller keeps here between its calls ([`Database::keep`]).
    kept: Arc<Mutex<Option<Box<dyn std::any::Any + Send>>>>,
}

/// What salsa reported since the log was last read.
#[derive(Default)]
struct Log {
    /// Queries that ran (`WillExecute`).
    executed: Vec<DatabaseKeyIndex>,
    /// Memos checked and kept without running (`DidValidateMemoizedValue`): a memo passed on its
    /// durability alone, through a check of its inputs, or after the memos it read were kept.
    validated: Vec<DatabaseKeyIndex>,
}

impl Default for Database {
    fn default() -> Self {
        Database {
            storage: salsa::Storage::new(None),
            executed: None,
            derived: Arc::default(),
            kept: Arc::default(),
        }
    }
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// A database that records every query execution (salsa's `WillExecute` events) and every
    /// memo kept (`DidValidateMemoizedValue`).
    pub fn with_execution_log() -> Database {
        let log = Arc::new(Mutex::new(Log::default()));
        let sink = log.clone();
        let callback = move |event: Event| {
            let mut log = sink.lock().unwrap_or_else(|e| e.into_inner());
            match event.kind {
                EventKind::WillExecute { database_key } => log.executed.push(database_key),
                EventKind::DidValidateMemoizedValue { database_key } => {
                    log.validated.push(database_key)
                }
                _ => {}
            }
        };
        Database {
            storage: salsa::Storage::new(Some(Box::new(callback))),
            executed: Some(log),
            derived: Arc::default(),
            kept: Arc::default(),
        }
    }

    /// How many inputs (saved values, copies, characters) the characters derived in this
    /// database have made ([`CharacterInput::derive`](crate::input::CharacterInput::derive): an
    /// action's proposed sheets). Salsa never frees an input, so a session rebuilds a database
    /// whose derived inputs outgrow its character ([`crate::Session::reclaim`]).
    pub fn derived(&self) -> usize {
        self.derived.load(Ordering::Relaxed)
    }

    /// Keeps `value` here for a later call on this database to [`Database::take_kept`], in
    /// place of what was kept before: what a call built from the database's character and would
    /// otherwise build again on the next call (ocf-actions keeps the session its proposed sheets
    /// are applied on). It goes with the database: a closed character's, or one a session
    /// reloads (a homebrew change); a reclaim passes it on ([`crate::Session::reclaim`]).
    pub fn keep<T: std::any::Any + Send>(&self, value: T) {
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(value));
    }

    /// What [`Database::keep`] kept, if it is a `T`; taken, so two calls at once never share it.
    pub fn take_kept<T: std::any::Any + Send>(&self) -> Option<T> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        kept.downcast::<T>().ok().map(|b| *b)
    }

    /// Moves what [`Database::keep`] kept here to `to` (a database rebuilt for the same
    /// character, [`crate::Session::reclaim`]).
    pub(crate) fn pass_kept(&self, to: &Database) {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).take();
        if kept.is_some() {
            *to.kept.lock().unwrap_or_else(|e| e.into_inner()) = kept;
        }
    }

    pub(crate) fn note_derived(&self, inputs: usize) {
        self.derived.fetch_add(inputs, Ordering::Relaxed);
    }

    /// The queries that ran since the last call, as `query_name(key)`, in execution order; field
    /// values name their field. Empty when the database keeps no log.
    pub fn take_executed(&self) -> Vec<String> {
        let Some(log) = &self.executed else {
            return Vec::new();
        };
        let keys = std::mem::take(&mut log.lock().unwrap_or_else(|e| e.into_inner()).executed);
        keys.into_iter().map(|key| self.describe(key)).collect()
    }

    /// The memos salsa checked and kept since the last call, as [`Database::take_executed`]
    /// names them. Empty when the database keeps no log.
    pub fn take_validated(&self) -> Vec<String> {
        let Some(log) = &self.executed else {
            return Vec::new();
        };
        let keys = std::mem::take(&mut log.lock().unwrap_or_else(|e| e.into_inner()).validated);
        keys.into_iter().map(|key| self.describe(key)).collect()
    }

    fn describe(&self, key: DatabaseKeyIndex) -> String {
        use salsa::Database as _;
        let name = self.ingredient_debug_name(key.ingredient_index());
        match crate::field::field_key_text(self, &name, key) {
            Some(field) => format!("{name}({field})"),
            None => name.into_owned(),
        }
    }
}
