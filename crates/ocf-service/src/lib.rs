//! `ocf serve`: the engine as a long-running service. HTTP and JSON on axum, one
//! [`ocf_engine::Session`] per ruleset kept warm, characters kept in a [`store::Store`] (SQLite by
//! default) so a restart loses nothing, each write made against a revision so a stale one is
//! refused (`conflict`), and each change pushed to the character's subscribers (server-sent
//! events): only the fields and parts of the sheet that changed. The web sheet editor is served by
//! the same binary.
//!
//! Layering: [`store`] (where files are kept), [`rulesets`] (which ruleset a character computes on;
//! the front end decides), [`changes`] (what an edit changed), [`app`] (sessions, open characters,
//! reads and writes), [`api`] and [`web`] (HTTP).

pub mod api;
pub mod app;
pub mod changes;
pub mod error;
pub mod odds;
pub mod rulesets;
pub mod store;
pub mod web;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use app::{App, Limits};

/// Serves `app` on `listener` until the process is interrupted (or forever): the API, the web
/// editor, and a task that brings watched characters to what another instance stored.
pub async fn serve(listener: tokio::net::TcpListener, app: Arc<App>) -> std::io::Result<()> {
    let refresher = app.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        loop {
            every.tick().await;
            let app = refresher.clone();
            let _ = tokio::task::spawn_blocking(move || app.refresh_watched()).await;
        }
    });
    axum::serve(listener, api::router(app))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}

/// Binds `addr` and serves `app` on a runtime of its own: what `ocf serve` calls.
pub fn run(addr: SocketAddr, app: App) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        eprintln!("ocf serve: listening on http://{}", listener.local_addr()?);
        serve(listener, Arc::new(app)).await
    })
}
