/** What the dashboard shows: chains (ids) and UTC days (YYYY-MM-DD), each optional. */
export interface DashboardFilter {
  readonly chains?: readonly number[];
  readonly from?: string;
  readonly to?: string;
}
