/** report.html's stylesheet, inlined: the page works from a mail attachment, offline. */
export const REPORT_CSS = `
:root{color-scheme:light;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;
--info:#3b6fb6;--ok:#2d8a4e;--warn:#c9720c;--bad:#c23b3b;--odd:#7b4bb3}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1440px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:17px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
p{margin:6px 0}
code,.mono,td{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12.5px}
.muted{color:var(--muted)}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:10px 0}
.facts dt{color:var(--muted)}.facts dd{margin:0}
.status{display:inline-block;padding:1px 8px;border-radius:10px;background:var(--soft);border:1px solid var(--line);font-weight:600}
.status-completed{border-color:var(--ok);color:var(--ok)}
.status-failed,.status-interrupted{border-color:var(--bad);color:var(--bad)}
.charts{display:flex;flex-wrap:wrap;gap:8px 32px}
.chart{max-width:100%;height:auto;overflow:visible}
.chart text{font-size:12px;fill:var(--fg)}
.bar-track{fill:var(--soft)}
.bar-info{fill:var(--info)}.bar-ok{fill:var(--ok)}.bar-warn{fill:var(--warn)}.bar-bad{fill:var(--bad)}.bar-odd{fill:var(--odd)}
.rps{fill:var(--info)}.grid{stroke:var(--line)}.axis{fill:var(--muted)!important;font-size:11px!important}
.mark-429{fill:var(--bad)}.mark-retry{fill:var(--warn)}.mark-ambiguous{fill:var(--odd)}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{border-bottom:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
td{unicode-bidi:isolate;overflow-wrap:break-word}
#diff td:nth-child(-n+1),#diff td:nth-child(n+5):nth-child(-n+7),#diff td:nth-child(11){overflow-wrap:anywhere}
#diff td:first-child{min-width:40ch}
#diff td:nth-child(5),#diff td:nth-child(6){min-width:22ch}
.scroll{overflow-x:auto}
th{background:var(--soft);font-weight:600;white-space:nowrap}
th button{all:unset;cursor:pointer}
th button:focus-visible{outline:2px solid var(--info)}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
.num{text-align:right}
.filters{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:center;margin:8px 0}
.filters label{display:flex;gap:6px;align-items:center}
.filters input{min-width:260px}
.filters select{max-width:24em}
.pager{display:flex;gap:10px;align-items:center;margin:6px 0}
.note{background:var(--soft);border-left:3px solid var(--warn);padding:6px 10px}
footer{margin-top:30px;color:var(--muted);font-size:12px}
`;
