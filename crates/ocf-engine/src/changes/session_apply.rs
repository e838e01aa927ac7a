//! `Session::apply`: applyChanges on an open character, as edits of its inputs, so only what the
//! changes touch is recomputed. A batch that fails leaves the session as it was.

use ocf_model::Change;

use super::{Applied, Applier, ChangeError, Options};
use crate::session::{CharacterId, Session};

impl Session {
    /// Applies `batch` to the open character `id`. On success the session holds the new file
    /// ([`Session::file`]); on failure it is brought back to the file it held before.
    #[tracing::instrument(name = "session.apply", level = "info", skip_all, fields(character = ?id, changes = batch.len()))]
    pub fn apply(
        &mut self,
        id: CharacterId,
        batch: &[Change],
        options: Options<'_>,
    ) -> Result<Applied, ChangeError> {
        let original = match self.file(id) {
            Ok(file) => file.clone(),
            Err(e) => return Err(ChangeError::new("unknown-character", "", e.to_string())),
        };
        let applier = Applier::new(self, id, original.clone(), options);
        match applier.run(batch) {
            Ok(applied) => Ok(applied),
            Err(error) => {
                let _ = self.update(id, &original);
                Err(error)
            }
        }
    }
}
