//! `ocf serve`: the engine as a long-running service. HTTP and JSON on axum, one
//! [`ocf_engine::Session`] per ruleset kept warm, characters kept in a [`store::Store`] (SQLite by
//! default) so a restart loses nothing, each write made against a revision so a stale one is
//! refused (`conflict`), and each change pushed to the character's subscribers (server-sent
//! events): only the fields and parts of the sheet that changed. The web sheet editor is served by
//! the same binary.
//!
//! Layering: [`store`] (where files and accounts are kept), [`accounts`] (users, roles, passwords,
//! tokens), [`rulesets`] (which ruleset a character computes on; the front end decides),
//! [`changes`] (what an edit changed), [`states`] (paused actions' signed states), [`app`]
//! (sessions, open characters, reads and writes), [`guard`] (what every request passes: host,
//! origin, content type, who sends it), [`api`] and [`web`] (HTTP), [`asks`] (rolls one
//! character's action asks of another's player, kept until answered), [`names`] (a listed
//! character's name).

pub mod accounts;
pub mod api;
pub mod app;
pub mod asks;
pub mod changes;
pub mod error;
pub mod guard;
pub mod names;
pub mod odds;
pub mod openapi;
pub mod rulesets;
pub mod states;
pub mod store;
pub mod texts;
pub mod web;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use app::{App, Limits};
pub use guard::Settings;

/// Whether the service may start on `addr` with the accounts it has: with none it is open to
/// whoever reaches it, which only loopback allows. The settings it starts with, and what to say
/// at start.
pub fn decide_open(app: &App, addr: SocketAddr) -> std::io::Result<(Settings, Option<String>)> {
    let mut settings = app.settings();
    let accounts = app
        .store()
        .accounts()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let loopback = addr.ip().is_loopback();
    settings.secure_cookie = settings.secure_cookie || !loopback;
    if !accounts.is_empty() {
        settings.open = false;
        return Ok((settings, None));
    }
    if !loopback {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "refusing to start open on {addr}: no account is configured, and anyone who \
                 reaches that address could do anything. Add one first (`ocf users add NAME \
                 --role gamemaster --store …`), or listen on loopback"
            ),
        ));
    }
    settings.open = true;
    Ok((
        settings,
        Some(format!(
            "no account is configured: the service is open to anyone who can reach {addr} \
             (loopback only), each of them the gamemaster; add a user (`ocf users add`) to ask \
             for logins"
        )),
    ))
}

/// Serves `app` on `listener` until the process is interrupted (or forever): the API, the web
/// editor, and a task that brings watched characters to what another instance stored. Refuses
/// to start open (no account) on an address that is not loopback.
pub async fn serve(listener: tokio::net::TcpListener, app: Arc<App>) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    let deciding = app.clone();
    let (settings, said) = tokio::task::spawn_blocking(move || decide_open(&deciding, addr))
        .await
        .map_err(std::io::Error::other)??;
    if let Some(said) = said {
        eprintln!("ocf serve: {said}");
    }
    let header_timeout = settings.header_timeout;
    app.set_settings(settings);
    // Another instance's writes reach this one's subscribers as the store tells of them
    // (PostgreSQL's notifications), or else by a check every second.
    let listening = {
        let store = app.clone();
        let app = Arc::downgrade(&app);
        let runtime = tokio::runtime::Handle::current();
        // One catch-up at a time: a tick that comes while the last one still runs adds none.
        let catching_up = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Each refresh on a blocking thread of its own: a character busy with a long request
        // holds up no other character's news.
        let changed = Box::new(move |id: Option<&str>| {
            let Some(app) = app.upgrade() else {
                return false;
            };
            match id {
                Some(id) if app.watches(id) => {
                    let id = id.to_owned();
                    runtime.spawn_blocking(move || app.refresh(&id));
                }
                Some(_) => {}
                None => {
                    use std::sync::atomic::Ordering;
                    if !catching_up.swap(true, Ordering::AcqRel) {
                        let catching_up = catching_up.clone();
                        runtime.spawn_blocking(move || {
                            app.refresh_watched();
                            catching_up.store(false, Ordering::Release);
                        });
                    }
                }
            }
            true
        });
        tokio::task::spawn_blocking(move || store.store().listen(changed))
            .await
            .map_err(std::io::Error::other)?
            .map_err(|e| std::io::Error::other(e.to_string()))?
    };
    if !listening {
        let refresher = Arc::downgrade(&app);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(1));
            loop {
                every.tick().await;
                let Some(app) = refresher.upgrade() else {
                    return;
                };
                let _ = tokio::task::spawn_blocking(move || app.refresh_watched()).await;
            }
        });
    }
    let router = api::router(app);
    let mut interrupted = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, say: wait a moment rather than stop serving.
                    tracing::warn!(%error, "accepting a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut interrupted => return Ok(()),
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            // HTTP/1.1 (a browser speaks it over plain HTTP, and a reverse proxy to its upstream):
            // a connection that sends nothing, or never finishes its headers (a half-open one, or
            // one sending a byte a minute), or sits idle between requests, is closed after
            // `header_timeout`; a request's body is bounded by the request timeout (guard).
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout);
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = builder.serve_connection(io, service).with_upgrades().await;
        });
    }
}

/// Binds `addr` and serves `app` on a runtime of its own: what `ocf serve` calls.
pub fn run(addr: SocketAddr, app: App) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    decide_open(&app, addr)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        eprintln!("ocf serve: listening on http://{}", listener.local_addr()?);
        serve(listener, Arc::new(app)).await
    })
}
