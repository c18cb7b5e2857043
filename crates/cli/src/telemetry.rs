//! Logging to stderr and, when asked, OpenTelemetry traces over OTLP/HTTP
//! (issue 35): `--otlp [ENDPOINT]`, or the OpenTelemetry environment
//! (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`).
//! The engine's `tracing` spans (the debate, each step, each model call
//! with its `gen_ai.*` attributes, background jobs, store appends) become
//! OpenTelemetry spans, one trace per debate run. Without an endpoint no
//! exporter and no layer exist, so the export costs nothing when it is off.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// The OTLP/HTTP port collectors (Jaeger, Tempo, the OpenTelemetry
/// Collector) listen on by default.
pub(crate) const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// The traces URL to export to: `--otlp URL`, `--otlp` alone (the
/// environment's endpoint, else [`DEFAULT_ENDPOINT`]), or without the flag
/// the environment's endpoint when one is set. A base endpoint gets the
/// signal path `/v1/traces`, as the OpenTelemetry conventions have it; the
/// traces-specific variable is used as it is.
pub(crate) fn traces_url(
    flag: Option<Option<String>>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let set = |key: &str| env(key).filter(|v| !v.trim().is_empty());
    if flag.as_ref().is_none_or(Option::is_none)
        && let Some(url) = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    {
        return Some(url.trim().to_owned());
    }
    let base = match flag {
        Some(Some(url)) => url,
        Some(None) => set("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_else(|| DEFAULT_ENDPOINT.into()),
        None => set("OTEL_EXPORTER_OTLP_ENDPOINT")?,
    };
    let base = base.trim().trim_end_matches('/');
    Some(if base.ends_with("/v1/traces") {
        base.to_owned()
    } else {
        format!("{base}/v1/traces")
    })
}

/// Puts `span` in the trace of the debate `debate`: its parent is a
/// remote span whose trace id (and span id) are derived from the debate id
/// (FNV-1a), so the first run and every resumed run of a debate export one
/// trace. Without the export this does nothing.
pub(crate) fn join_debate_trace(span: &tracing::Span, debate: &str) {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let hash = |salt: u64| {
        debate
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64 ^ salt, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
            })
    };
    let trace = (u128::from(hash(1)) << 64) | u128::from(hash(2));
    let parent = SpanContext::new(
        TraceId::from_bytes(trace.to_be_bytes()),
        SpanId::from_bytes(hash(3).to_be_bytes()),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(parent));
}

/// The exporter's provider while the process runs; dropping it (at exit)
/// flushes the spans still queued.
pub(crate) struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(e) = provider.shutdown()
        {
            eprintln!("warning: the OpenTelemetry export did not finish: {e}");
        }
    }
}

/// Installs the stderr log (`filter`) and, with `traces`, the OTLP export
/// of Agon's spans (with `content`, prompts and completions attached to
/// the model-call spans). Called before the async runtime starts: the
/// exporter's HTTP client blocks, on the batch processor's own thread.
pub(crate) fn init(
    filter: tracing_subscriber::EnvFilter,
    traces: Option<String>,
    content: bool,
) -> Telemetry {
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(filter);
    let Some(url) = traces else {
        let _ = tracing_subscriber::registry().with(fmt).try_init();
        return Telemetry { provider: None };
    };
    let exporter = match opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(url.clone())
        .build()
    {
        Ok(exporter) => exporter,
        Err(e) => {
            let _ = tracing_subscriber::registry().with(fmt).try_init();
            eprintln!("warning: traces are not exported to {url}: {e}");
            return Telemetry { provider: None };
        }
    };
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            opentelemetry_sdk::Resource::builder()
                .with_service_name("agon")
                .build(),
        )
        .build();
    agon_llm::capture_content(content);
    // Agon's own spans, debug ones included (store appends, background
    // jobs); nothing from the libraries underneath.
    let agon_only = tracing_subscriber::filter::filter_fn(|meta| {
        meta.target().starts_with("agon") && *meta.level() <= tracing::Level::DEBUG
    });
    let otel = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("agon"))
        .with_filter(agon_only);
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init();
    Telemetry {
        provider: Some(provider),
    }
}

/// The log filter: `RUST_LOG` when set, else Agon's crates at the level
/// `-v` asks for (warnings only without it).
pub(crate) fn log_filter(verbose: u8) -> tracing_subscriber::EnvFilter {
    use tracing_subscriber::EnvFilter;
    if let Ok(filter) = EnvFilter::try_from_default_env() {
        return filter;
    }
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let crates = [
        "agon",
        "agon_core",
        "agon_context",
        "agon_protocol",
        "agon_llm",
        "agon_store",
        "agon_memory",
        "agon_orchestrator",
        "agon_app",
        "agon_server",
        "agon_worker",
        "agon_cli",
    ];
    let directives: Vec<String> = std::iter::once("warn".to_owned())
        .chain(crates.iter().map(|c| format!("{c}={level}")))
        .collect();
    EnvFilter::new(directives.join(","))
}

/// Installs the log subscriber (stderr only, so logs never mix with the
/// live view on stdout) and, when asked, the OTLP trace export.
/// `verbose` is `-v`'s count; `otlp` and `otlp_content` are the flags.
pub(crate) fn init_logging(
    verbose: u8,
    otlp: Option<Option<String>>,
    otlp_content: bool,
) -> Telemetry {
    let url = traces_url(otlp, &|k| std::env::var(k).ok());
    init(log_filter(verbose), url, otlp_content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_follows_the_flag_then_the_environment() {
        let none = |_: &str| None;
        let base = |k: &str| {
            (k == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "http://collector:4318/".to_owned())
        };
        let traces = |k: &str| {
            (k == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").then(|| "http://t:4318/custom".to_owned())
        };
        assert_eq!(
            traces_url(None, &none),
            None,
            "off without flag or environment"
        );
        assert_eq!(
            traces_url(Some(None), &none).as_deref(),
            Some("http://localhost:4318/v1/traces")
        );
        assert_eq!(
            traces_url(None, &base).as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(
            traces_url(Some(Some("http://x:1234".into())), &base).as_deref(),
            Some("http://x:1234/v1/traces"),
            "the flag's URL wins"
        );
        assert_eq!(
            traces_url(Some(None), &traces).as_deref(),
            Some("http://t:4318/custom"),
            "the traces variable is used as it is"
        );
    }
}
