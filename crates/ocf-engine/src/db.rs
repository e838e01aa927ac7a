//! The database: salsa storage, plus an optional log of the queries that really ran, for the
//! incremental tests and `ocf watch`'s "N field values recomputed".

use std::sync::{Arc, Mutex};

use salsa::{DatabaseKeyIndex, Event, EventKind};

/// The sheet database. Cheap to clone (a clone shares the storage); a setter waits for every
/// clone to drop, so keep clones short-lived.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    executed: Option<Arc<Mutex<Vec<DatabaseKeyIndex>>>>,
}

impl Default for Database {
    fn default() -> Self {
        Database {
            storage: salsa::Storage::new(None),
            executed: None,
        }
    }
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// A database that records every query execution (salsa's `WillExecute` events).
    pub fn with_execution_log() -> Database {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let callback = move |event: Event| {
            if let EventKind::WillExecute { database_key } = event.kind {
                sink.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(database_key);
            }
        };
        Database {
            storage: salsa::Storage::new(Some(Box::new(callback))),
            executed: Some(log),
        }
    }

    /// The queries that ran since the last call, as `query_name(key)`, in execution order; field
    /// values name their field. Empty when the database keeps no log.
    pub fn take_executed(&self) -> Vec<String> {
        let Some(log) = &self.executed else {
            return Vec::new();
        };
        let keys = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
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
