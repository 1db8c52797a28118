/**
 * Settings (contract §4.14; design §8.1, §8.22): tenant settings, this browser's owner device, the
 * owner devices (remove the others), and the client-side scan rules.
 */
import { OwnerDevices, ThisBrowser } from './settings/OwnerDevices';
import { ScanRules } from './settings/ScanRules';
import { TenantSettingsSection } from './settings/TenantSettingsForm';

/** The settings screen (contract §4.14; design §8.22). */
export function Settings() {
  return (
    <>
      <h1>Settings</h1>
      <TenantSettingsSection />
      <ThisBrowser />
      <OwnerDevices />
      <ScanRules />
    </>
  );
}
