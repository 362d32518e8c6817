//! ferrokinesis served on 127.0.0.1 only (its own binary listens on every interface), with settings for tests:
//! a shard limit large enough for scale benchmarks and short state transitions.
//!
//! Usage: ferrokinesis-loopback PORT [SHARD_LIMIT]
//! Prints "listening on 127.0.0.1:PORT" once it accepts connections; stops on SIGTERM or SIGINT.
//!
//! The enhanced fan-out fault model (see subscribe_faults.rs) is set by the environment:
//! `FERROKINESIS_SUBSCRIBE_FAULTS` (error code=share pairs) and `FERROKINESIS_SUBSCRIPTION_MS` (how long a
//! subscription lasts before the service ends it; AWS: 5 minutes, the default).

mod subscribe_faults;

use std::sync::Arc;

use ferrokinesis::store::StoreOptions;
use subscribe_faults::SubscribeFaults;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let port: u16 = args
        .next()
        .and_then(|p| p.parse().ok())
        .expect("usage: ferrokinesis-loopback PORT [SHARD_LIMIT]");
    let shard_limit: u32 = args.next().map(|s| s.parse().expect("SHARD_LIMIT: a number")).unwrap_or(20_000);
    let defaults = StoreOptions::default();
    let subscription_ms = match std::env::var("FERROKINESIS_SUBSCRIPTION_MS") {
        Ok(ms) => ms.parse().expect("FERROKINESIS_SUBSCRIPTION_MS: milliseconds"),
        Err(_) => defaults.subscribe_to_shard_session_ms,
    };
    let options = StoreOptions {
        create_stream_ms: 50,
        delete_stream_ms: 50,
        update_stream_ms: 50,
        shard_limit,
        subscribe_to_shard_session_ms: subscription_ms,
        ..defaults
    };
    let faults = Arc::new(SubscribeFaults::from_env().unwrap_or_else(|e| panic!("{e}")));
    let (app, _store) = ferrokinesis::create_app(options);
    let app = app.layer(axum::middleware::from_fn_with_state(faults, subscribe_faults::apply));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("cannot listen on 127.0.0.1");
    println!("listening on 127.0.0.1:{port}");
    let shutdown = async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM");
        tokio::select! {
            _ = term.recv() => {},
            _ = tokio::signal::ctrl_c() => {},
        }
    };
    if let Err(e) = ferrokinesis::serve_plain_http(listener, app, shutdown).await {
        eprintln!("ferrokinesis-loopback: {e}");
        std::process::exit(1);
    }
}
