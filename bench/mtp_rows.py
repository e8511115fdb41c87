"""Measured vs predicted TPOT/TTFT of the corpus rows in MTP entries (entry name holding "-mtp").

Usage: python3 bench/mtp_rows.py BEFORE.json AFTER.json, each the output of
`moecast validate corpus --format json`; rows are joined by id (bench/RESULTS-mtp.md).
"""
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
def scored(d): return {r.get('id') or r['file']+':'+str(r['line']):r for r in d['rows'] if r.get('tpot_error_pct') is not None}
A=scored(a); B=scored(b)
ids=[i for i in B if '-mtp' in B[i]['entry']]
print(len(ids), 'mtp rows scored in after;', sum(1 for i in ids if i in A), 'also scored before')
print('%-34s %4s %5s %5s | %6s %6s %6s | %7s %7s %7s' % ('id','C','isl','osl','mTPOT','before','after','mTTFT','before','after'))
ea=[];eb=[];ta=[];tb=[]
for i in sorted(ids, key=lambda i:(B[i]['input_tokens'],B[i]['output_tokens'],B[i]['concurrency'])):
  r=B[i]; o=A.get(i)
  m=r['measured']; p=r['predicted']
  po=o['predicted'] if o else None
  f=lambda x: '%.1f'%x if x is not None else '-'
  print('%-34s %4d %5d %5d | %6.2f %6s %6.2f | %7.0f %7s %7.0f' % (i[-34:], r['concurrency'], r['input_tokens'], r['output_tokens'], m['tpot']['mean'], f(po['tpot']['mean']) if po else '-', p['tpot']['mean'], m['ttft']['mean'], '%.0f'%po['ttft']['mean'] if po else '-', p['ttft']['mean']))
  eb.append(abs(r['tpot_error_pct'])); tb.append(abs(r['ttft_error_pct']))
  if o: ea.append(abs(o['tpot_error_pct'])); ta.append(abs(o['ttft_error_pct']))
import statistics as s
print('after: n=%d TPOT MAPE %.1f TTFT MAPE %.1f'%(len(eb),s.mean(eb),s.mean(tb)))
if ea: print('before (same rows scored then): n=%d TPOT MAPE %.1f TTFT MAPE %.1f'%(len(ea),s.mean(ea),s.mean(ta)))
