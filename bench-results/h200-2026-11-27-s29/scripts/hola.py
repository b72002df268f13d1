import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print('%-32s %s %-22s %.2f us' % (r['matrix'], r['type'], r['method'], float(r['spmv_ms']) * 1e3))
