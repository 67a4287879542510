#include "report/html_timeline.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/percentile.h"
#include "report/html_svg.h"
#include "report/units.h"
#include "report_view/report_view.h"

namespace bubblescope::html {
namespace {

constexpr int64_t kLabelWidth = 96;  // the row labels' column, left of time 0
constexpr int64_t kRowHeight = 18;
constexpr int64_t kRowPitch = 22;   // row height and the gap below it
constexpr int64_t kCommLineY = 20;  // the communication line, in the gap under the row
constexpr int64_t kAxisHeight = 24;
constexpr int64_t kRightMargin = 12;
// The time scale makes all but the shortest ops (the 2nd percentile of op durations) wide enough
// for the largest microbatch number, and the longest iteration at least kFitWidth wide; but never
// wider than kMaxWidth, past which a browser scrolls slowly and labels give way to tooltips.
constexpr int64_t kShortOpPercentile = 2;
constexpr double kFitWidth = 1100.0;
constexpr double kMaxWidth = 24000.0;
constexpr int64_t kDigitPx = 7;  // a digit at the labels' 11 px font, with room to spare
constexpr int64_t kLabelPadPx = 4;
// Two ops that share their time (DualPipeV's overlapped forward and backward) split the row:
// the forward in the upper half, the other below, each labelled in a smaller font.
constexpr int64_t kHalfHeight = kRowHeight / 2;
constexpr int64_t kHalfDigitPx = 5;
constexpr int64_t kHalfLabelPadPx = 2;

// Where in its row a cell is drawn.
enum class Lane : uint8_t { kWhole, kUpper, kLower };

// The width a cell needs for `label` to be written on it. The page's script hides labels by the
// same rule when zoomed (TimelineScript).
int64_t LabelPx(size_t characters, Lane lane = Lane::kWhole) {
  if (lane != Lane::kWhole) {
    return kHalfDigitPx * static_cast<int64_t>(characters) + kHalfLabelPadPx;
  }
  return kDigitPx * static_cast<int64_t>(characters) + kLabelPadPx;
}

}  // namespace

std::vector<StageRow> StageRows(const job::Pipeline& pipeline,
                                const report_view::RankPlaces& places) {
  std::vector<StageRow> rows;
  const std::vector<int32_t>& ranks = pipeline.bubble.ranks;
  for (size_t i = 0; i < ranks.size(); ++i) {
    rows.push_back({.stage = places.StageOf(ranks[i]), .rank = ranks[i], .figures = i});
  }
  // Rows in the order's list (rank ids where the order is unknown), unlisted ranks last.
  std::stable_sort(rows.begin(), rows.end(), [&places](const StageRow& a, const StageRow& b) {
    const auto key = [&places](const StageRow& row) {
      const int32_t listed = places.ListedOf(row.rank);
      return listed < 0 ? INT32_MAX : listed;
    };
    return key(a) < key(b);
  });
  return rows;
}

namespace {

// Pixels per nanosecond for every picture of the pipeline (see kShortOpPercentile).
double ScaleOf(const job::Pipeline& pipeline) {
  std::vector<TimeNs> durations;
  int32_t last_microbatch = 0;
  for (const op_timeline::TimelineOp& op : pipeline.op_timeline.ops) {
    if (op.end > op.start) durations.push_back(op.end - op.start);
    last_microbatch = std::max(last_microbatch, op.microbatch);
  }
  TimeNs longest = 0;
  for (const bubble::IterationFigures& iteration : pipeline.bubble.iterations) {
    longest = std::max(longest, iteration.window());
  }
  if (pipeline.ideal.has_value()) {
    longest = std::max(longest, pipeline.ideal->schedule_ns);
    for (const pipeline::IdealOp& op : pipeline.ideal->schedule) {
      if (op.end > op.start) durations.push_back(op.end - op.start);
      last_microbatch = std::max(last_microbatch, op.microbatch);
    }
  }
  if (longest <= 0) return 0.0;
  const double span = static_cast<double>(longest);
  double scale = kFitWidth / span;
  if (!durations.empty()) {
    const TimeNs short_op = NearestRank(std::move(durations), kShortOpPercentile);
    // One pixel over, so rounding both ends of a cell never takes it below the label's width.
    const double label_px = static_cast<double>(LabelPx(absl::StrCat(last_microbatch).size()) + 1);
    if (short_op > 0) scale = std::max(scale, label_px / static_cast<double>(short_op));
  }
  return std::min(scale, kMaxWidth / span);
}

// Draws one cell of a row: a rect from `start` to `end` ns after the picture's time 0, with
// `tooltip` and, when the cell is wide enough for it, `label` centred on it.
class RowPainter {
 public:
  RowPainter(double scale, std::string* out) : scale_(scale), out_(*out) {}

  void Cell(std::string_view css_class, TimeNs start, TimeNs end, const std::string& tooltip,
            const std::string& label, Lane lane = Lane::kWhole) {
    const int64_t x = X(start);
    const int64_t width = std::max<int64_t>(1, X(end) - x);
    const bool whole = lane == Lane::kWhole;
    absl::StrAppend(&out_, "<rect class=", std::string(css_class), " x=", x, " width=", width,
                    lane == Lane::kLower ? absl::StrCat(" y=", kHalfHeight) : std::string(),
                    " height=", whole ? kRowHeight : kHalfHeight, "><title>", Esc(tooltip),
                    "</title></rect>");
    if (!label.empty() && width >= LabelPx(label.size(), lane)) {
      absl::StrAppend(&out_, "<text", whole ? "" : " class=h", " x=", x + width / 2,
                      " y=", whole ? 13 : (lane == Lane::kUpper ? 8 : 17), ">", label, "</text>");
    }
  }

  // The rank's communication as one line under the row (a stretch per span, overlapping its
  // compute or not), one path with one tooltip: a big job has thousands of transfers per row.
  void CommLine(const std::vector<TimeRange>& spans, TimeNs origin) {
    if (spans.empty()) return;
    TimeNs total = 0;
    absl::StrAppend(&out_, "<path class=cm d=\"");
    for (const TimeRange& span : spans) {
      const int64_t x = X(span.start - origin);
      absl::StrAppend(&out_, "M", x, " ", kCommLineY, "h",
                      std::max<int64_t>(1, X(span.end - origin) - x));
      total += span.end - span.start;
    }
    absl::StrAppend(&out_, "\"><title>communication ", Millis(static_cast<double>(total)),
                    " ms in ", spans.size(), spans.size() == 1 ? " span" : " spans",
                    "</title></path>");
  }

 private:
  int64_t X(TimeNs at) const { return kLabelWidth + Px(static_cast<double>(at) * scale_); }

  double scale_;
  std::string& out_;
};

// The picture at its own scale (wide enough for the labels), scrolling sideways without the
// page's script; the script fits it to the window and zooms it, reading the time the plot's
// `data-w` pixels stand for in `data-ms`.
void OpenSvg(int64_t rows, TimeNs span, double scale, std::string* out) {
  const int64_t plot = Px(static_cast<double>(span) * scale);
  const int64_t width = kLabelWidth + plot + kRightMargin;
  const int64_t height = rows * kRowPitch + kAxisHeight;
  absl::StrAppend(out, "<svg class=tl width=", width, " height=", height, " viewBox=\"0 0 ", width,
                  " ", height, "\" data-w=", plot, " data-ms=", static_cast<double>(span) / 1e6,
                  ">");
}

void CloseSvg(int64_t rows, TimeNs span, double scale, std::string* out) {
  AppendAxis(
      static_cast<double>(span) / 1e6, kLabelWidth, Px(static_cast<double>(span) * scale),
      rows * kRowPitch, [](double ms) { return absl::StrCat(ms, " ms"); }, out);
  absl::StrAppend(out, "</svg>");
}

void OpenRow(size_t row, int32_t stage, int32_t rank, std::string* out) {
  const std::string stage_text = stage < 0 ? std::string("?") : absl::StrCat(stage);
  absl::StrAppend(out, "<g class=sr data-stage=", stage < 0 ? "-1" : stage_text,
                  rank < 0 ? std::string() : absl::StrCat(" data-rank=", rank),
                  " transform=\"translate(0,", static_cast<int64_t>(row) * kRowPitch,
                  ")\"><text class=rl x=4 y=13>stage ", stage_text,
                  rank < 0 ? std::string() : absl::StrCat(" \xC2\xB7 rank ", rank), "</text>");
}

// "forward mb 3: 0.200 ms at 1.234 ms" (with " chunk 1" after the microbatch from the second
// chunk on): short, since a big job has tens of thousands; the row names the stage.
std::string OpTooltip(pipeline::OpType type, int32_t microbatch, int32_t chunk, TimeNs start,
                      TimeNs end) {
  std::string text = absl::StrCat(OpTypeWord(type), " mb ",
                                  microbatch < 0 ? std::string("?") : absl::StrCat(microbatch));
  if (chunk > 0) absl::StrAppend(&text, " chunk ", chunk);
  absl::StrAppend(&text, ": ", Millis(static_cast<double>(end - start)), " ms at ",
                  Millis(static_cast<double>(start)), " ms");
  return text;
}

// The op's class; an odd chunk's cells also get `k` (drawn lighter), so an interleaved
// schedule's chunks tell apart at a glance.
std::string OpCellClass(pipeline::OpType type, int32_t chunk) {
  if (chunk <= 0 || chunk % 2 == 0) return OpClass(type);
  return absl::StrCat("\"", OpClass(type), " k\"");
}

// An op that shares its time with another: a forward in the upper half, the rest below.
Lane LaneOf(const op_timeline::TimelineOp& op) {
  if (!op.overlapped) return Lane::kWhole;
  return op.type == pipeline::OpType::kForward ? Lane::kUpper : Lane::kLower;
}

std::string MicrobatchLabel(int32_t microbatch) {
  return microbatch < 0 ? std::string() : absl::StrCat(microbatch);
}

// The measured iteration: per stage row its ops and its idle spans, time 0 at the window start.
std::string IterationSvg(const std::vector<StageRow>& rows,
                         const bubble::IterationFigures& iteration,
                         const std::vector<const op_timeline::TimelineOp*>& ops, double scale) {
  std::string out;
  const TimeNs origin = iteration.window_start;
  OpenSvg(static_cast<int64_t>(rows.size()), iteration.window(), scale, &out);
  RowPainter paint(scale, &out);
  for (size_t r = 0; r < rows.size(); ++r) {
    const StageRow& row = rows[r];
    OpenRow(r, row.stage, row.rank, &out);
    if (row.figures < iteration.ranks.size()) {
      for (const bubble::IdleSpan& span : iteration.ranks[row.figures].idle_spans) {
        paint.Cell(IdleClass(span.kind), span.start - origin, span.end - origin,
                   absl::StrCat(std::string(bubble::IdleKindName(span.kind)), " ",
                                Millis(static_cast<double>(span.end - span.start)), " ms at ",
                                Millis(static_cast<double>(span.start - origin)), " ms"),
                   "");
      }
    }
    for (const op_timeline::TimelineOp* op : ops) {
      if (op->rank != row.rank) continue;
      paint.Cell(OpCellClass(op->type, op->chunk), op->start - origin, op->end - origin,
                 absl::StrCat(OpTooltip(op->type, op->microbatch, op->chunk, op->start - origin,
                                        op->end - origin),
                              op->overlapped ? ", overlapped with another op" : ""),
                 MicrobatchLabel(op->microbatch), LaneOf(*op));
    }
    if (row.figures < iteration.ranks.size()) {
      paint.CommLine(iteration.ranks[row.figures].comm_spans, origin);
    }
    absl::StrAppend(&out, "</g>");
  }
  CloseSvg(static_cast<int64_t>(rows.size()), iteration.window(), scale, &out);
  return out;
}

// The schedule's own run, one row per stage, time 0 at its first compute.
std::string IdealSvg(const pipeline::IdealBubble& ideal, int32_t p, double scale) {
  std::string out;
  OpenSvg(p, ideal.schedule_ns, scale, &out);
  RowPainter paint(scale, &out);
  for (int32_t stage = 0; stage < p; ++stage) {
    OpenRow(static_cast<size_t>(stage), stage, -1, &out);
    absl::StrAppend(&out, "<rect class=bg x=", kLabelWidth,
                    " width=", Px(static_cast<double>(ideal.schedule_ns) * scale),
                    " height=", kRowHeight, " />");
    for (const pipeline::IdealOp& op : ideal.schedule) {
      if (op.stage != stage) continue;
      paint.Cell(OpCellClass(op.type, op.chunk), op.start, op.end,
                 OpTooltip(op.type, op.microbatch, op.chunk, op.start, op.end),
                 MicrobatchLabel(op.microbatch));
    }
    absl::StrAppend(&out, "</g>");
  }
  CloseSvg(p, ideal.schedule_ns, scale, &out);
  return out;
}

// The pictures of pipeline `index` zoom and pan together (one view, one time scale).
std::string ZoomGroup(size_t index) { return absl::StrCat("data-z=p", index, " tabindex=0"); }

std::string ZoomBar(size_t index) {
  return absl::StrCat(
      "<span class=zb data-z=p", index,
      "><button data-a=in title=\"zoom in (+)\">+</button><button data-a=out title=\"zoom out "
      "(-)\">&minus;</button><button data-a=fit title=\"the whole iteration (0)\">reset</button> "
      "wheel: zoom, drag: pan, keys + &minus; &larr; &rarr; 0</span>");
}

std::string IterationOption(const bubble::IterationFigures& iteration, bool selected) {
  return absl::StrCat("<option value=", iteration.number, selected ? " selected" : "",
                      ">iteration ", iteration.number, ": ",
                      Millis(static_cast<double>(iteration.window())), " ms, bubble ",
                      Percent(iteration.bubble_fraction), "%",
                      iteration.complete ? "" : " (incomplete)", "</option>");
}

// The timelines' zoom (docs/html-report.md, "Zoom and pan"). The markup is drawn at a scale wide
// enough for every label (`data-w` plot pixels for `data-ms` ms); the pictures of one pipeline
// (`.sc[data-z]`) share one view: u0, the first plot pixel shown at that scale, and k, screen
// pixels per plot pixel. A picture in a closed <details> waits until it opens (its width is
// unknown, and asking would lay out the page once per picture). Each redraw moves every cell,
// label, communication line and axis tick from the positions read once per picture; a label
// shows where its cell is wide enough.
constexpr char kZoomScript[] = R"js(
(()=>{const L=96,R=12,V={};
function nice(r,n){const q=r/Math.max(1,n),p=Math.pow(10,Math.floor(Math.log10(q)));
for(const f of[1,2,5])if(f*p>=q)return f*p;return 10*p;}
function cells(s){if(s._z)return s._z;
const c={r:[],t:[],p:[],w:+s.dataset.w,ms:+s.dataset.ms,h:+s.getAttribute('height'),
ax:s.querySelector('.ax')};
for(const e of s.querySelectorAll('.sr rect'))
c.r.push([e,+e.getAttribute('x')-L,+e.getAttribute('width')]);
for(const e of s.querySelectorAll('.sr text:not(.rl)')){const h=e.classList.contains('h');
c.t.push([e,+e.getAttribute('x')-L,+e.previousElementSibling.getAttribute('width'),
e.textContent.length*(h?5:7)+(h?2:4)]);}
for(const e of s.querySelectorAll('.sr path.cm')){
const n=e.getAttribute('d').match(/-?[\d.]+/g).map(Number),g=[];
for(let i=0;i+2<n.length;i+=3)g.push([n[i]-L,n[i+2]]);c.p.push([e,n[1],g]);}
c.y=+/M\S+ ([\d.]+)h/.exec(c.ax.querySelector('path').getAttribute('d'))[1];return s._z=c;}
function draw(s,v){const c=cells(s),W=v.W,X=u=>L+(u-v.u0)*v.k,a0=L,b0=L+W;
s.setAttribute('width',L+W+R);s.setAttribute('viewBox','0 0 '+(L+W+R)+' '+c.h);
for(const[e,u,w]of c.r){const a=Math.max(X(u),a0),b=Math.min(X(u+w),b0),d=Math.max(b-a,1);
e.setAttribute('x',b>=a?Math.min(a,b0-d):a0);e.setAttribute('width',b>=a?d:0);}
for(const[e,u,w,n]of c.t){const m=X(u);e.setAttribute('x',m);
e.setAttribute('visibility',w*v.k>=n&&m>a0&&m<b0?'visible':'hidden');}
for(const[e,y,g]of c.p){let d='';for(const[u,w]of g){
const a=Math.max(X(u),a0),b=Math.min(X(u+w),b0);
if(b>=a)d+='M'+a+' '+y+'h'+Math.max(b-a,1);}e.setAttribute('d',d||'M0 0');}
const lo=v.u0/c.w*c.ms,hi=(v.u0+W/v.k)/c.w*c.ms,st=nice(hi-lo,Math.floor(W/80));
let g='<path d="M'+L+' '+c.y+'h'+W+'"/>';
for(let i=Math.ceil(lo/st-1e-9);i*st<=hi*(1+1e-9);++i){const x=L+(i*st-lo)/(hi-lo)*W;
g+='<path d="M'+x+' '+c.y+'v4"/><text'+(x>b0-24?' class=r':'')+' x="'+x+'" y="'+(c.y+15)+'">'+
(+(i*st).toPrecision(6))+' ms</text>';}
c.ax.innerHTML=g;}
const boxes=z=>[...document.querySelectorAll('.sc[data-z="'+z+'"]')];
const pics=z=>boxes(z).flatMap(b=>[...b.querySelectorAll('svg.tl')]);
function render(z){const v=V[z];v.k=Math.min(Math.max(v.k,v.kmin),Math.max(8,v.kmin*256));
v.u0=Math.min(Math.max(v.u0,0),Math.max(0,v.m-v.W/v.k));
for(const s of pics(z))if(cells(s).w>0)draw(s,v);}
function fit(z){const b=boxes(z);
if(!b.length||b[0].closest('details:not([open])')||!b[0].clientWidth)return;
const W=Math.max(100,b[0].clientWidth-L-R),m=Math.max(1,...pics(z).map(s=>cells(s).w));
V[z]={W,m,kmin:W/m,k:W/m,u0:0};render(z);}
function zoom(z,f,x){const v=V[z];x=(x??L+v.W/2)-L;const u=v.u0+x/v.k;
v.k=Math.min(Math.max(v.k*f,v.kmin),Math.max(8,v.kmin*256));v.u0=u-x/v.k;render(z);}
function pan(z,dx){V[z].u0+=dx/V[z].k;render(z);}
const at=e=>{const b=e.target.closest&&e.target.closest('[data-z]');
return b&&V[b.dataset.z]?b.dataset.z:null;};
const all=()=>new Set([...document.querySelectorAll('.sc[data-z]')].map(b=>b.dataset.z));
for(const z of all())fit(z);
for(const b of document.querySelectorAll('.tlb'))
new MutationObserver(()=>fit(b.closest('[data-z]').dataset.z)).observe(b,{childList:true});
document.addEventListener('toggle',e=>{if(e.target.open)
for(const b of e.target.querySelectorAll('.sc[data-z]'))fit(b.dataset.z);},true);
addEventListener('resize',()=>{for(const z of all()){const v=V[z],b=boxes(z)[0];
if(!v){fit(z);continue;}if(b.closest('details:not([open])')||!b.clientWidth)continue;
const W=Math.max(100,b.clientWidth-L-R);if(W===v.W)continue;
v.k*=W/v.W;v.kmin=W/v.m;v.W=W;render(z);}});
document.addEventListener('wheel',e=>{const z=at(e);if(!z||e.target.closest('.zb'))return;
e.preventDefault();
const s=e.target.closest('svg')||pics(z)[0];
if(Math.abs(e.deltaX)>Math.abs(e.deltaY))pan(z,e.deltaX);
else zoom(z,Math.exp(-e.deltaY/300),e.clientX-s.getBoundingClientRect().left);},{passive:false});
let drag=null;
document.addEventListener('pointerdown',e=>{const z=at(e);
if(!z||e.button||e.target.closest('.zb'))return;
drag={z,x:e.clientX,u:V[z].u0};e.target.closest('[data-z]').setPointerCapture(e.pointerId);});
document.addEventListener('pointermove',e=>{if(!drag)return;const v=V[drag.z];
v.u0=drag.u-(e.clientX-drag.x)/v.k;render(drag.z);});
document.addEventListener('pointerup',()=>{drag=null;});
document.addEventListener('click',e=>{
const a=e.target.closest&&e.target.closest('.zb button'),z=a&&at(e);
if(!z)return;const d=a.dataset.a;if(d==='fit')fit(z);else zoom(z,d==='in'?1.5:1/1.5);});
document.addEventListener('keydown',e=>{const z=at(e);if(!z||e.target.tagName==='SELECT')return;
const v=V[z];
const f={'+':()=>zoom(z,1.5),'=':()=>zoom(z,1.5),'-':()=>zoom(z,1/1.5),'0':()=>fit(z),
ArrowLeft:()=>pan(z,-v.W/8),ArrowRight:()=>pan(z,v.W/8)}[e.key];if(f){e.preventDefault();f();}});
})();
)js";

}  // namespace

const char* TimelineScript() { return kZoomScript; }

std::string TimelineSection(const job::Pipeline& pipeline, const report_view::PipelineView& view,
                            size_t index) {
  const bubble::Result& bubble = pipeline.bubble;
  const double scale = ScaleOf(pipeline);
  std::string out;
  if (bubble.iterations.empty() || scale <= 0.0) {
    return "<p class=note>No iteration with device activity: nothing to draw.</p>\n";
  }
  std::map<int64_t, std::vector<const op_timeline::TimelineOp*>> ops_by_iteration;
  for (const op_timeline::TimelineOp& op : pipeline.op_timeline.ops) {
    ops_by_iteration[op.iteration].push_back(&op);
  }
  const std::vector<const op_timeline::TimelineOp*> none;
  auto ops_of = [&](int64_t number) -> const std::vector<const op_timeline::TimelineOp*>& {
    auto found = ops_by_iteration.find(number);
    return found == ops_by_iteration.end() ? none : found->second;
  };
  const std::vector<StageRow> rows = StageRows(pipeline, view.places);
  const size_t chosen = view.typical_iteration;
  const std::string box = absl::StrCat("p", index, "t");
  absl::StrAppend(
      &out, "<h3>Measured schedule</h3>\n<p><label>Iteration <select class=it data-box=", box, ">");
  for (size_t i = 0; i < bubble.iterations.size(); ++i) {
    absl::StrAppend(&out, IterationOption(bubble.iterations[i], i == chosen));
  }
  absl::StrAppend(&out, "</select></label> ", ZoomBar(index), "</p>\n");
  if (pipeline.op_timeline.ops.empty()) {
    absl::StrAppend(&out,
                    "<p class=note>The ops could not be placed (no schedule shape), so only the "
                    "bubble's idle spans are drawn.</p>\n");
  } else if (pipeline.op_timeline.unlabelled > 0) {
    absl::StrAppend(&out, "<p class=note>", pipeline.op_timeline.unlabelled,
                    " ops whose microbatch could not be told carry no number.</p>\n");
  }
  // The chosen iteration is drawn in place; the rest wait in templates, parsed but never laid
  // out until chosen, so a long trace costs little to open.
  const bubble::IterationFigures& first = bubble.iterations[chosen];
  absl::StrAppend(&out, "<div class=sc ", ZoomGroup(index), "><div class=tlb id=", box,
                  " data-it=", first.number, ">",
                  IterationSvg(rows, first, ops_of(first.number), scale), "</div>");
  for (size_t i = 0; i < bubble.iterations.size(); ++i) {
    if (i == chosen) continue;
    const bubble::IterationFigures& iteration = bubble.iterations[i];
    absl::StrAppend(&out, "<template data-it=", iteration.number, ">",
                    IterationSvg(rows, iteration, ops_of(iteration.number), scale), "</template>");
  }
  absl::StrAppend(&out, "</div>\n");
  if (pipeline.ideal.has_value() && !pipeline.ideal->schedule.empty() &&
      pipeline.shape.has_value()) {
    const schedule_inference::Result& shape = *pipeline.shape;
    absl::StrAppend(&out, "<h3>Theoretical schedule</h3>\n<p>The same p=", shape.p, ", m=", shape.m,
                    ", v=", shape.v, " ", Esc(schedule_inference::ScheduleFamilyName(shape.family)),
                    " schedule with every stage at the mean op times, free links and no host "
                    "delay: bubble ",
                    Percent(pipeline.ideal->fraction), "% (",
                    Esc(pipeline::IdealSourceName(pipeline.ideal->source)),
                    "). Same time scale as above, zoomed with it; the gaps are its own "
                    "bubble.</p>\n"
                    "<div class=sc ",
                    ZoomGroup(index), ">", IdealSvg(*pipeline.ideal, shape.p, scale), "</div>\n");
  } else {
    absl::StrAppend(&out,
                    "<p class=note>No theoretical schedule to draw (the schedule's shape or its "
                    "per-stage times are unknown).</p>\n");
  }
  return out;
}

DrawnMarks& DrawnMarks::operator|=(const DrawnMarks& other) {
  weight_grad = weight_grad || other.weight_grad;
  odd_chunks = odd_chunks || other.odd_chunks;
  overlapped = overlapped || other.overlapped;
  return *this;
}

DrawnMarks MarksOf(const job::Pipeline& pipeline) {
  DrawnMarks marks;
  // What OpCellClass and LaneOf make of each op, measured and theoretical.
  const auto mark = [&marks](pipeline::OpType type, int32_t chunk, bool overlapped) {
    marks.weight_grad = marks.weight_grad || type == pipeline::OpType::kWeightGrad;
    marks.odd_chunks = marks.odd_chunks || (chunk > 0 && chunk % 2 == 1);
    marks.overlapped = marks.overlapped || overlapped;
  };
  for (const op_timeline::TimelineOp& op : pipeline.op_timeline.ops) {
    mark(op.type, op.chunk, op.overlapped);
  }
  if (pipeline.ideal.has_value()) {
    for (const pipeline::IdealOp& op : pipeline.ideal->schedule) mark(op.type, op.chunk, false);
  }
  return marks;
}

}  // namespace bubblescope::html
